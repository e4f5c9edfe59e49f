"""The digest: what adjudication decided where an annotator's values differ from gold."""

from __future__ import annotations

import pytest

from profiles.selectors import ProfileError, profile_digest, profile_scope
from tests.profiles.conftest import RULE


def test_the_digest_says_per_item_and_slot_what_was_decided_and_why(team, annotator):
    digest = profile_digest(user=annotator, scope=profile_scope())
    assert (digest.total, digest.page, digest.pages) == (2, 1, 1)
    # t4-0 was decided last, so it comes first
    assert [e.source_id for e in digest.entries] == ["t4-0", "t3-0"]
    t4, t3 = digest.entries
    assert t4.round_name == "P" and t4.assignment_id == team["alice_p"][3].pk
    agency, intensity = t4.slots
    assert (agency.slot, agency.theirs, agency.gold, agency.source) == (
        "agency",
        "someone-else",
        "i",
        "convention",
    )
    assert agency.convention.pk == team["convention"].pk and agency.convention.rule == RULE
    assert agency.why == "C1 v1: agency i/someone-else -> i"
    assert (intensity.slot, intensity.theirs, intensity.gold) == ("intensity", "very", "plain")
    assert (intensity.source, intensity.who, intensity.why) == ("adjudicated", "carol", "a plain reading")
    assert intensity.convention is None
    [only] = t3.slots
    assert (only.slot, only.theirs, only.gold, only.why, only.who) == (
        "intensity", "plain", "very", "the text says very", "carol",
    )  # fmt: skip


def test_an_annotator_who_agrees_with_gold_has_an_empty_digest(team, other_annotator):
    digest = profile_digest(user=other_annotator, scope=profile_scope())
    assert (digest.total, digest.entries, digest.pages) == (0, (), 1)


def test_the_digest_pages_and_refuses_a_page_past_the_last(team, annotator):
    first = profile_digest(user=annotator, scope=profile_scope(), per_page=1)
    second = profile_digest(user=annotator, scope=profile_scope(), page=2, per_page=1)
    assert (first.pages, [e.source_id for e in first.entries]) == (2, ["t4-0"])
    assert [e.source_id for e in second.entries] == ["t3-0"]
    with pytest.raises(ProfileError) as refused:
        profile_digest(user=annotator, scope=profile_scope(), page=3, per_page=1)
    assert refused.value.field == "page" and refused.value.named == "page: there is no page 3; pages 1 to 2"


def test_a_second_construal_with_the_annotators_value_is_named(team, annotator, adjudicator):
    from adjudication.gold.services import gold_resolve
    from adjudication.models import GoldItem

    gold = GoldItem.objects.get(item__source_id="t3-0")
    gold_resolve(user=adjudicator, gold=gold, values={"intensity": "very"}, second={"intensity": "plain"},
                 why="both readings hold")  # fmt: skip
    entry = next(
        e for e in profile_digest(user=annotator, scope=profile_scope()).entries if e.source_id == "t3-0"
    )
    [only] = entry.slots
    assert (only.gold, only.second, only.why) == ("very", "plain", "both readings hold")
