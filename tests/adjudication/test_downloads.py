"""Downloads name their file safely, whatever a round is called, and a name cannot carry control
characters (issue 24: a newline in a round name broke every CSV download of that round)."""

import pytest
from django.urls import reverse

from annotator.models import Round
from annotator.services import RoundError, round_create
from tests.adjudication.evaluation_fixture import evaluation_csv_url, make_evaluation_round

pytestmark = pytest.mark.django_db


def test_a_csv_download_of_a_round_with_a_newline_in_its_name_is_served(
    client, annotator, other_annotator, adjudicator
):
    round_ = make_evaluation_round(annotator, other_annotator, adjudicator)
    Round.objects.filter(pk=round_.pk).update(name="pilot\r\nround")  # as an older release let it be
    round_.refresh_from_db()
    client.force_login(adjudicator)
    response = client.get(evaluation_csv_url(round_, "headline", "pass=gold"))
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert "\n" not in disposition and "\r" not in disposition
    # a slug (issue 25): no quote, space or control character reaches a file name
    assert disposition == 'attachment; filename="evaluation-pilot-round-gold-headline.csv"'
    quoted = Round.objects.filter(pk=round_.pk)
    quoted.update(name='Pilot "B" round')
    response = client.get(evaluation_csv_url(round_, "headline", "pass=gold"))
    expected = 'attachment; filename="evaluation-pilot-b-round-gold-headline.csv"'
    assert response["Content-Disposition"] == expected
    assert response.content.decode().splitlines()[0]  # the table itself


@pytest.mark.parametrize("name", ["pilot\nround", "tab\there", "bell\x07", " "])
def test_a_name_with_control_characters_is_refused_everywhere(
    client, admin_user, items, annotator, other_annotator, name
):
    from annotator.sampling import item_set_from_items

    item_set = item_set_from_items(name="four", items=items)
    with pytest.raises(RoundError) as refused:
        round_create(name=name, item_set=item_set, annotators=[annotator, other_annotator])
    assert refused.value.field == "name"
    client.force_login(admin_user)
    response = client.post(
        reverse("manage_round_new"),
        {"name": name, "item_set": item_set.pk, "annotators_per_item": 2, "mode": "blind",
         "annotators": [annotator.pk, other_annotator.pk], "text_field": "masked_text"},
    )  # fmt: skip
    assert response.status_code == 400
    api = client.post(
        "/api/rounds/",
        {"name": name, "item_set": item_set.pk, "annotators": [annotator.username, other_annotator.username]},
        content_type="application/json",
    )  # fmt: skip
    assert api.status_code == 400 and "name" in api.json()
    assert not Round.objects.exists()


def test_an_item_set_name_with_a_newline_is_refused(items):
    from annotator.models import ItemSet
    from annotator.sampling import DrawError, item_set_from_items

    with pytest.raises(DrawError, match="no control characters"):
        item_set_from_items(name="four\nsets", items=items)
    assert not ItemSet.objects.exists()
