"""What a round's adjudication pages say before anyone submits, and the gold list's filters."""

import re

import pytest
from django.urls import reverse

from adjudication.models import GoldConstrual
from annotator.models import Round
from annotator.sampling import item_set_from_items


@pytest.fixture
def adjudicator_client(client, adjudicator):
    client.force_login(adjudicator)
    return client


@pytest.mark.parametrize("name", ["agreement", "conflicts", "flows", "anchoring", "gold_list"])
def test_a_round_without_submissions_says_so_with_its_annotators(adjudicator_client, prefilled_round, name):
    response = adjudicator_client.get(reverse(name, args=[prefilled_round.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    notice = re.search(r'<p class="messages" id="no-submissions">(.*?)</p>', page, re.S)
    assert notice, page
    assert "No submissions yet" in notice.group(1)
    assert "none of its 2 annotators (alice, bob) has submitted" in notice.group(1)
    assert "1 annotators" not in page and "0 items, " not in page
    assert "agree on every shared item" not in page  # the flows page claimed agreement over nothing


def test_a_round_with_no_annotator_assigned_says_that(adjudicator_client, items):
    round_ = Round.objects.create(name="empty", item_set=item_set_from_items(name="e", items=items))
    page = adjudicator_client.get(reverse("agreement", args=[round_.pk])).content.decode()
    assert "No submissions yet: no annotator is assigned to this round (2 per item)." in page


def test_a_round_with_submissions_has_no_such_notice(adjudicator_client, submitted):
    page = adjudicator_client.get(reverse("agreement", args=[submitted.pk])).content.decode()
    assert 'id="no-submissions"' not in page
    assert "4 items, 2 annotators (alice, bob)" in page


def test_the_gold_label_filter_lists_each_label_once(adjudicator_client, gold_round):
    # t3-0 keeps two construals that both route to pride: the label is in the table twice
    labels = list(GoldConstrual.objects.filter(gold__round=gold_round).values_list("label", flat=True))
    assert labels.count("pride") > 1
    page = adjudicator_client.get(reverse("gold_list", args=[gold_round.pk])).content.decode()
    select = re.search(r'<select name="label">(.*?)</select>', page, re.S).group(1)
    options = re.findall(r"<option[^>]*>([^<]*)</option>", select)
    assert options[0] == "any"
    assert options[1:] == sorted(set(labels))
    filtered = adjudicator_client.get(reverse("gold_list", args=[gold_round.pk]), {"label": "pride"})
    assert filtered.status_code == 200
    assert re.search(r"<option selected>pride</option>", filtered.content.decode())
