"""Each prediction records the text it read, and a round prefills only from its own text: the
generated text names the emotion the masked text hides (issues 23 and 25). The new-round form
offers only parsers that read the round's text and names the others; the service, the API and
``create_round`` refuse one that read another text."""

import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.models import ParserPrediction, Round
from annotator.queries import assignment_with_annotation
from annotator.sampling import item_set_from_items
from annotator.selectors import prefill_for, prefills_for
from annotator.services import RoundError, round_create
from jobs.services import job_run
from nsmcore.schema import SLOTS
from predictions.prefill import job_prefill_start
from tests.explications import PRED

pytestmark = pytest.mark.django_db

#: another legal reading: the same slots with a different intensity
OTHER = {**PRED, "intensity": next(v for v in SLOTS[-1].values if v != PRED["intensity"])}


def _predict(items, parser, explication, field):
    for item in items:
        ParserPrediction.objects.create(
            item=item, parser=parser, explication=explication, legal=True, text_field=field
        )


def test_prefills_of_both_texts_are_kept_apart_and_each_records_its_text(items, admin_user):
    item_set = item_set_from_items(name="four", items=items)
    for field in (Round.TEXT_GENERATED, Round.TEXT_MASKED):
        job_run(job_prefill_start(user=admin_user, item_set=item_set, text_field=field, enqueue=False).pk)
    rows = ParserPrediction.objects.filter(parser="lexical")
    # one prediction per item and text: the second job did not count the first's as its own
    assert sorted(rows.values_list("text_field", flat=True)) == ["masked_text"] * 4 + ["text"] * 4
    again = job_prefill_start(user=admin_user, item_set=item_set, text_field=Round.TEXT_MASKED, enqueue=False)
    job_run(again.pk)
    again.refresh_from_db()
    assert (again.skipped, rows.count()) == (4, 8)


def test_a_round_reads_the_prediction_of_its_own_text_even_when_another_is_newer(
    items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    _predict(items, "lex", PRED, Round.TEXT_MASKED)
    round_ = round_create(
        name="masked", item_set=item_set, annotators=[annotator, other_annotator], mode="prefilled",
        prefill_parser="lex", text_field=Round.TEXT_MASKED,
    )  # fmt: skip
    _predict(items, "lex", OTHER, Round.TEXT_GENERATED)  # newer, but of the text the round hides
    assignment = round_.assignments.filter(annotator=annotator).first()
    # the three read paths: one item, a page of assignments, the workspace's one statement
    assert prefill_for(round_, assignment.item_id) == PRED
    assert prefills_for([assignment]) == {(round_.pk, assignment.item_id): PRED}
    assert assignment_with_annotation(annotator.pk, assignment.pk).newest_prefill == PRED
    # an unrecorded field (an import) is readable by every round, and the newer one wins
    ParserPrediction.objects.filter(text_field=Round.TEXT_GENERATED).update(text_field="")
    assert prefill_for(round_, assignment.item_id) == OTHER
    assert prefills_for([assignment]) == {(round_.pk, assignment.item_id): OTHER}
    assert assignment_with_annotation(annotator.pk, assignment.pk).newest_prefill == OTHER


def test_a_round_over_predictions_of_another_text_is_refused_naming_both_texts(
    items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    _predict(items, "lex", PRED, Round.TEXT_GENERATED)
    with pytest.raises(RoundError) as refused:
        round_create(
            name="r", item_set=item_set, annotators=[annotator, other_annotator], mode="prefilled",
            prefill_parser="lex", text_field=Round.TEXT_MASKED,
        )  # fmt: skip
    assert refused.value.field == "prefill_parser"
    assert "'text' (generated text)" in str(refused.value) and "'masked_text'" in str(refused.value)
    assert not Round.objects.exists()
    # the same parser over the text it read is fine
    round_create(
        name="r", item_set=item_set, annotators=[annotator, other_annotator], mode="prefilled",
        prefill_parser="lex", text_field=Round.TEXT_GENERATED,
    )  # fmt: skip
    assert Round.objects.get().prefill_parser == "lex"


def test_the_form_offers_only_parsers_of_the_rounds_text_and_names_the_others(
    client, admin_user, items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    _predict(items, "lex", PRED, Round.TEXT_GENERATED)
    _predict(items[:2], "clf", PRED, Round.TEXT_MASKED)
    client.force_login(admin_user)
    url = reverse("manage_round_new")
    body = client.get(url, {"item_set": item_set.pk, "text_field": "masked_text"}).content.decode()
    select = re.search(r'<select name="prefill_parser".*?</select>', body, re.S).group(0)
    assert "clf (legal predictions for 2 of 4 items)" in select and "lex" not in select
    warning = re.search(r'<div class="warn" id="field-mismatch".*?</div>', body, re.S).group(0)
    assert '<li data-parser="lex"><code>lex</code> read text</li>' in warning
    # switching the text (htmx sends the form again) offers the other parser
    fragment = client.get(
        url, {"item_set": item_set.pk, "text_field": "text"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    select = re.search(r'<select name="prefill_parser".*?</select>', fragment, re.S).group(0)
    assert "lex (legal predictions for 4 of 4 items)" in select and "clf" not in select
    # a post naming the other text's parser is a 400 that names it, and writes nothing
    data = {
        "name": "r1", "item_set": item_set.pk, "annotators_per_item": 2, "mode": "prefilled",
        "annotators": [annotator.pk, other_annotator.pk], "text_field": "masked_text",
        "prefill_parser": "lex",
    }  # fmt: skip
    response = client.post(url, data)
    assert response.status_code == 400 and "lex" in response.content.decode()
    assert not Round.objects.exists()


def test_the_api_and_the_command_refuse_a_parser_of_another_text(
    client, admin_user, items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    _predict(items, "lex", PRED, Round.TEXT_GENERATED)
    client.force_login(admin_user)
    response = client.post(
        "/api/rounds/",
        {
            "name": "r1", "item_set": item_set.pk, "mode": "prefilled", "prefill_parser": "lex",
            "annotators": [annotator.username, other_annotator.username], "text_field": "masked_text",
        },
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 400, response.content
    assert "'text' (generated text)" in response.json()["prefill_parser"][0]
    with pytest.raises(CommandError, match="'text' \\(generated text\\)"):
        call_command(
            "create_round", "r2", item_set="four", mode="prefilled", prefill_parser="lex",
            annotators=f"{annotator.username},{other_annotator.username}", text="masked_text",
        )  # fmt: skip
    assert not Round.objects.exists()
