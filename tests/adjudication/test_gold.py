"""Conventions and gold: the acceptance rule, votes, matching and applying, revision, resolving
by hand with two construals, provenance, routing and the audit trail."""

import pytest

from adjudication.gold.services import (
    AdjudicationError,
    convention_apply,
    convention_matches,
    convention_propose,
    convention_revise,
    convention_vote,
    convention_withdraw,
    gold_resolve,
    gold_sync,
)
from adjudication.models import Convention, GoldChange, GoldItem
from tests.explications import PRED


def golds(round_):
    return {g.item.source_id: g for g in GoldItem.objects.filter(round=round_).select_related("item")}


def propose(round_, user, **kw):
    args = {"slot": "agency", "value_a": "i", "value_b": "someone-else", "chosen": "i",
            "rule": "the writer's own act takes agency=i"} | kw  # fmt: skip
    return convention_propose(user=user, round_=round_, **args)


def test_unanimous_items_become_gold_without_a_click(submitted):
    assert gold_sync(submitted) == 4
    by_source = golds(submitted)
    agreed = by_source["t4-0"]
    assert agreed.status == "resolved"
    first = agreed.construals.get()
    assert first.label == "pride" and first.rule_set_version == "1"
    assert all(p == {"source": "unanimous"} for p in first.provenance.values())
    conflict = by_source["t1-0"].construals.get()
    assert by_source["t1-0"].status == "open"
    assert conflict.slots["agency"] is None and conflict.slots["trigger"] == PRED["trigger"]
    assert "agency" not in conflict.provenance and conflict.label == ""
    assert gold_sync(submitted) == 0  # idempotent


def test_the_acceptance_rule_needs_a_quorum_and_a_majority(
    submitted, adjudicator, other_adjudicator, settings
):
    convention = propose(submitted, adjudicator)
    assert convention.number == 1 and convention.version == 1
    convention = convention_vote(user=adjudicator, convention=convention, approve=True)
    assert convention.status == "proposed"  # one vote of a quorum of two
    convention = convention_vote(user=other_adjudicator, convention=convention, approve=True, comment="yes")
    assert convention.status == "accepted" and convention.decided_at

    split = propose(submitted, adjudicator, slot="intensity", value_a="plain", value_b="very", chosen="plain")
    convention_vote(user=adjudicator, convention=split, approve=True)
    assert convention_vote(user=other_adjudicator, convention=split, approve=False).status == "rejected"

    settings.NSM_CONVENTION_QUORUM = 3
    pending = propose(submitted, adjudicator, slot="body", value_a="yes", value_b="no", chosen="no")
    convention_vote(user=adjudicator, convention=pending, approve=True)
    assert convention_vote(user=other_adjudicator, convention=pending, approve=True).status == "proposed"


def test_a_second_vote_by_the_same_adjudicator_is_refused(submitted, adjudicator, other_adjudicator):
    convention = propose(submitted, adjudicator)
    convention_vote(user=adjudicator, convention=convention, approve=True)
    with pytest.raises(AdjudicationError, match="carol has already voted on C1 v1"):
        convention_vote(user=adjudicator, convention=convention, approve=False)
    assert convention.votes.count() == 1
    convention_vote(user=other_adjudicator, convention=convention, approve=True)
    with pytest.raises(AdjudicationError, match="only a proposed convention takes votes"):
        convention_vote(user=other_adjudicator, convention=convention, approve=True)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"slot": "mood"}, "unknown slot 'mood'"),
        ({"value_b": "i"}, "two different values"),
        ({"chosen": "no-one"}, "the chosen value must be i or someone-else"),
        ({"value_b": "somebody"}, "'somebody' is not an allowed value"),
        ({"rule": "  "}, "write the convention in words"),
    ],
)
def test_bad_proposals_are_refused_with_the_reason(submitted, adjudicator, kw, message):
    with pytest.raises(AdjudicationError, match=message):
        propose(submitted, adjudicator, **kw)
    assert not Convention.objects.exists()


def test_one_live_convention_per_dispute(submitted, adjudicator):
    propose(submitted, adjudicator)
    with pytest.raises(AdjudicationError, match="C1 v1 already covers agency someone-else / i"):
        propose(submitted, adjudicator, value_a="someone-else", value_b="i")


def test_applying_resolves_exactly_the_matching_conflicts_with_provenance(
    submitted, adjudicator, other_adjudicator
):
    gold_sync(submitted)
    convention = propose(submitted, adjudicator)
    for user in (adjudicator, other_adjudicator):
        convention = convention_vote(user=user, convention=convention, approve=True)
    matches = convention_matches(convention)
    assert sorted(m.source_id for m in matches) == ["t1-0", "t2-0"]
    assert matches[0].values == ["i", "someone-else"]
    assert convention_apply(user=adjudicator, convention=convention) == 2
    by_source = golds(submitted)
    for source in ("t1-0", "t2-0"):
        gold = by_source[source]
        construal = gold.construals.get()
        assert gold.status == "resolved"
        assert construal.slots["agency"] == "i"
        assert construal.provenance["agency"] == {
            "source": "convention",
            "convention": 1,
            "version": 1,
            "by": "carol",
        }
        assert construal.label == "pride"
        change = gold.changes.last()
        assert (change.who, change.before, change.after["agency"]) == (adjudicator, {"agency": None}, "i")
        assert change.why.startswith("convention C1 v1")
    assert by_source["t3-0"].status == "open"  # intensity is not this convention's business
    assert convention_apply(user=adjudicator, convention=convention) == 0  # nothing left to settle


def test_a_proposed_convention_cannot_be_applied_and_only_its_proposer_withdraws_it(
    submitted, adjudicator, other_adjudicator
):
    convention = propose(submitted, adjudicator)
    with pytest.raises(AdjudicationError, match="only an accepted convention is applied"):
        convention_apply(user=adjudicator, convention=convention)
    with pytest.raises(AdjudicationError, match="only the proposer"):
        convention_withdraw(user=other_adjudicator, convention=convention)
    assert convention_withdraw(user=adjudicator, convention=convention).status == "withdrawn"


def test_revising_flags_what_the_old_version_resolved_and_supersedes_it(
    submitted, adjudicator, other_adjudicator
):
    gold_sync(submitted)
    convention = propose(submitted, adjudicator)
    for user in (adjudicator, other_adjudicator):
        convention = convention_vote(user=user, convention=convention, approve=True)
    convention_apply(user=adjudicator, convention=convention)
    revision = convention_revise(
        user=other_adjudicator, convention=convention, chosen="someone-else", rule="the other's act wins"
    )
    assert (revision.number, revision.version, revision.status) == (1, 2, "proposed")
    by_source = golds(submitted)
    assert by_source["t1-0"].needs_review and by_source["t1-0"].review_reason == "C1 revised to v2"
    assert not by_source["t4-0"].needs_review  # unanimous: untouched by the convention
    for user in (adjudicator, other_adjudicator):
        revision = convention_vote(user=user, convention=revision, approve=True)
    convention.refresh_from_db()
    assert (revision.status, convention.status) == ("accepted", "superseded")


def test_two_construals_are_stored_with_their_pivotal_slots(submitted, adjudicator):
    gold_sync(submitted)
    gold = golds(submitted)["t3-0"]
    gold_resolve(user=adjudicator, gold=gold, values={"intensity": "plain"}, second={"intensity": "very"},
                 why="both readings hold")  # fmt: skip
    gold.refresh_from_db()
    first, second = gold.construals.all()
    assert (first.slots["intensity"], second.slots["intensity"]) == ("plain", "very")
    assert gold.pivotal_slots == ["intensity"] and gold.status == "resolved"
    assert first.provenance["intensity"] == {"source": "adjudicated", "by": "carol"}
    assert first.label == second.label == "pride"
    change = gold.changes.last()
    assert change.why == "both readings hold" and change.after["second"]["intensity"] == "very"
    # resolving again with one construal drops the second
    gold_resolve(user=adjudicator, gold=gold, values={"intensity": "plain"}, why="one reading after all")
    assert gold.construals.count() == 1
    assert GoldChange.objects.filter(gold=gold).count() == 3


def test_resolving_by_hand_needs_every_open_slot(submitted, adjudicator):
    gold_sync(submitted)
    gold = golds(submitted)["t1-0"]
    with pytest.raises(AdjudicationError, match="choose a value for every unresolved slot: agency"):
        gold_resolve(user=adjudicator, gold=gold, values={"body": "yes"}, why="a body word")
    with pytest.raises(AdjudicationError, match="must differ from the first"):
        gold_resolve(user=adjudicator, gold=gold, values={"agency": "i"}, second={"agency": "i"}, why="x")
    gold.refresh_from_db()
    assert gold.status == "open" and gold.construals.get().slots["body"] == "no"


def test_an_item_enters_gold_when_its_last_annotation_arrives(
    all_but_bobs_last, prefilled_round, other_annotator
):
    from annotator.models import Assignment
    from annotator.services import annotation_submit

    assert gold_sync(prefilled_round) == 3
    assert gold_sync(prefilled_round) == 0  # nothing new: no work done
    last = Assignment.objects.get(round=prefilled_round, annotator=other_annotator, item__source_id="t4-0")
    annotation_submit(assignment=last, user=other_annotator, values=dict(PRED), base_version=0)
    assert gold_sync(prefilled_round) == 1
    assert golds(prefilled_round)["t4-0"].status == "resolved"


@pytest.mark.parametrize("why", ["", "   "])
def test_resolving_by_hand_needs_a_reason(submitted, adjudicator, why):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t3-0")
    with pytest.raises(AdjudicationError, match="why: say why the item is resolved this way"):
        gold_resolve(user=adjudicator, gold=gold, values={"intensity": "plain"}, why=why)
    gold.refresh_from_db()
    assert gold.status == "open" and not GoldChange.objects.filter(gold=gold, who=adjudicator).exists()
