"""A gold item's audit trail reads as per-slot differences: who, when, slot: old -> new, why."""

import re

import pytest
from django.urls import reverse

from adjudication.gold.audit import gold_audit_trail
from adjudication.gold.services import (
    convention_apply,
    convention_propose,
    convention_vote,
    gold_resolve,
    gold_sync,
)
from adjudication.models import GoldItem


@pytest.fixture
def trail(submitted, adjudicator, other_adjudicator):
    """t1-0: opened with agency unresolved, settled by C1 v1 (applied by dave), then changed by hand
    by carol, who keeps a second construal with intensity=very."""
    convention = convention_propose(
        user=adjudicator, round_=submitted, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own act takes agency=i.",
    )  # fmt: skip
    for user in (adjudicator, other_adjudicator):
        convention = convention_vote(user=user, convention=convention, approve=True)
    convention_apply(user=other_adjudicator, convention=convention)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    gold_resolve(
        user=adjudicator, gold=gold, values={"agency": "someone-else"}, second={"intensity": "very"},
        why="the text names the neighbour",
    )  # fmt: skip
    return gold


def test_the_trail_is_a_list_of_slot_differences(trail):
    entries = gold_audit_trail(trail)
    assert [e.kind for e in entries] == ["adjudicated", "convention", "opened"]  # newest first
    by_hand, by_convention, opened = entries
    assert by_hand.who == "carol" and by_hand.why == "the text names the neighbour"
    assert [d.text for d in by_hand.diffs] == [
        "agency: i -> someone-else",
        "label: pride -> joy",  # pride needs agency=i
        "construal 2 kept: intensity: plain -> very",
    ]
    assert by_convention.who == "dave" and by_convention.why == "C1 v1: agency i/someone-else -> i"
    assert [d.text for d in by_convention.diffs] == ["agency: unresolved -> i", "label: none -> pride"]
    assert opened.who == "the tool" and "agency" in opened.unresolved
    assert "experiencer: unresolved -> i" in [d.text for d in opened.diffs]
    assert len(opened.diffs) == 11


def test_the_gold_page_shows_the_trail_not_raw_dictionaries(client, adjudicator, trail):
    client.force_login(adjudicator)
    response = client.get(reverse("gold_item", args=[trail.round_id, trail.item_id]))
    page = response.content.decode()
    assert response.status_code == 200
    history = re.search(r'<table class="rules" id="gold-history">.*?</table>', page, re.S).group(0)
    assert "{" not in history and "&#x27;slots&#x27;" not in history
    rows = re.findall(r"<tr class=\"change[^\"]*\">(.*?)</tr>", history, re.S)
    assert len(rows) == 3
    assert "carol" in rows[0] and "<code>agency: i -&gt; someone-else</code>" in rows[0]
    assert "<code>label: pride -&gt; joy</code>" in rows[0]
    assert "<code>construal 2 kept: intensity: plain -&gt; very</code>" in rows[0]
    assert "adjudicated" in rows[0] and "the text names the neighbour" in rows[0]
    assert "dave" in rows[1] and "<code>agency: unresolved -&gt; i</code>" in rows[1]
    assert '<span class="tag">convention</span> C1 v1: agency i/someone-else -&gt; i' in rows[1]
    assert (
        "the tool" in rows[2] and "11 slots filled unanimously" in rows[2] and "unresolved: agency" in rows[2]
    )


def test_dropping_the_second_construal_reads_as_such(submitted, adjudicator):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t3-0")
    gold_resolve(
        user=adjudicator, gold=gold, values={"intensity": "plain"}, second={"intensity": "very"}, why="both"
    )
    gold_resolve(user=adjudicator, gold=gold, values={}, why="one reading after all")
    latest = gold_audit_trail(gold)[0]
    assert latest.why == "one reading after all"
    assert [d.text for d in latest.diffs] == ["construal 2 dropped"]
