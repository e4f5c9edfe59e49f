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


LONG = "I was ... when " + "the long letter from my grandmother finally arrived " * 4 + "after the war."


def test_the_conflict_list_shows_each_items_text_fetched_in_one_query(adjudicator_client, submitted):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotator.models import Item

    Item.objects.filter(source_id="t1-0").update(masked_text=LONG)
    adjudicator_client.get(reverse("conflicts", args=[submitted.pk]))  # the analysis, computed once
    with CaptureQueriesContext(connection) as queries:
        response = adjudicator_client.get(reverse("conflicts", args=[submitted.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    # the round shows the masked text; a long one is cut in the summary and whole when opened
    row = re.search(r'<tr data-item="\d+"><td><a[^>]*>t1-0</a>.*?</tr>', page, re.S).group(0)
    assert "<details" in row and "<summary>I was ... when the long letter" in row and "…</summary>" in row
    assert "after the war.</details>" in row
    short = re.search(r'<tr data-item="\d+"><td><a[^>]*>t2-0</a>.*?</tr>', page, re.S).group(0)
    assert '<span class="cell-text">I was ... when my bike was stolen.</span>' in short
    item_queries = [q["sql"] for q in queries.captured_queries if '"annotator_item"' in q["sql"]]
    assert len(item_queries) == 1 and "masked_text" in item_queries[0]
    htmx = adjudicator_client.get(
        reverse("conflicts", args=[submitted.pk]), {"slot": "agency"}, HTTP_HX_REQUEST="true"
    )
    assert "I was ... when my bike was stolen." in htmx.content.decode()


def test_the_convention_preview_shows_each_items_text(adjudicator_client, submitted, adjudicator):
    from adjudication.gold.services import convention_propose
    from annotator.models import Item

    Item.objects.filter(source_id="t1-0").update(masked_text=LONG)
    convention = convention_propose(
        user=adjudicator, round_=submitted, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own act takes agency=i.",
    )  # fmt: skip
    adjudicator_client.post(reverse("gold_open", args=[submitted.pk]))  # the page's button: GETs open none
    page = adjudicator_client.get(reverse("convention", args=[convention.pk])).content.decode()
    preview = re.search(r'<table class="rules" id="preview">.*?</table>', page, re.S).group(0)
    assert "<summary>I was ... when the long letter" in preview and "after the war.</details>" in preview
    assert '<span class="cell-text">I was ... when my bike was stolen.</span>' in preview
