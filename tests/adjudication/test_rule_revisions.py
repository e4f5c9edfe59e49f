"""Rule set revisions as services: propose, refuse, vote, activate, re-route, roll back."""

import pytest
from django.core.cache import cache

from adjudication.models import GoldChange, GoldConstrual
from adjudication.rule_revisions.services import (
    RevisionError,
    revision_activate,
    revision_comparison,
    revision_propose,
    revision_reopen,
    revision_vote,
    revision_withdraw,
)
from annotator.models import ParserPrediction
from annotator.sampling import item_set_from_items
from nsmcore.mapper import RuleSetError
from rules.models import RuleSetActivation, RuleSetVersion
from rules.rulesets import ACTIVE_KEY, active_rule_set
from tests.explications import PRED
from tests.rules.data import NEUTRAL_SURPRISE, gold_items, moved, swapped, v1

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold(items):
    """Four gold records: two route to surprise under v1 (no-emotion once that rule comes first)."""
    return gold_items(items, [NEUTRAL_SURPRISE, PRED, NEUTRAL_SURPRISE, PRED])


def labels():
    return list(GoldConstrual.objects.order_by("gold__item_id").values_list("label", "rule_set_version"))


def test_a_fresh_database_has_the_packaged_version_active():
    active = RuleSetVersion.objects.get(status="active")
    assert active.version == "1" and active.suite_ok
    assert active.activations.get().how == "initial"
    assert active_rule_set().version == "1" and active.content_hash == active_rule_set().content_hash


def test_a_proposal_gets_the_next_number_its_parent_and_a_passing_report(adjudicator, gold):
    v = revision_propose(user=adjudicator, document=moved("no-emotion", 0), note="neutral first")
    assert (v.version, v.status, v.parent.version, v.created_by) == ("2", "proposed", "1", adjudicator)
    assert v.report["ok"] is True
    names = [s["name"] for s in v.report["suite"]["sections"]]
    assert names[:2] == ["canonical self-checks", "slot-flip consistency"]
    pilot = v.report["pilot"]
    assert pilot["item_set"] == "P" and pilot["with_gold"] == 4
    assert [(c["old"], c["new"]) for c in pilot["changes"]] == [("surprise", "no-emotion")] * 2
    assert active_rule_set().version == "1"  # proposing changes nothing that routes


def test_identical_rules_are_refused_naming_the_version(adjudicator):
    doc = {**v1(), "description": "other words, same rules"}
    with pytest.raises(RevisionError, match="identical to v1"):
        revision_propose(user=adjudicator, document=doc)
    assert RuleSetVersion.objects.count() == 1


def test_a_bad_rule_set_names_the_rule_and_slot_and_stores_nothing(adjudicator):
    doc = v1()
    doc["rules"][5]["conditions"]["others_know"] = ["maybe-know"]
    with pytest.raises(RuleSetError, match=r"rule 5 \(shame\): others_know='maybe-know'"):
        revision_propose(user=adjudicator, document=doc)
    with pytest.raises(RuleSetError, match="unknown slot 'mood'"):
        revision_propose(
            user=adjudicator, document={**v1(), "rules": [{"emotion": "joy", "conditions": {"mood": ["x"]}}]}
        )
    assert RuleSetVersion.objects.count() == 1


def test_a_taken_version_name_is_refused(adjudicator):
    with pytest.raises(RevisionError, match="version '1' already exists"):
        revision_propose(user=adjudicator, document=moved("no-emotion", 0), version="1")


def test_a_proposal_failing_the_suite_cannot_be_activated_or_approved(adjudicator, admin_user, gold):
    v = revision_propose(user=adjudicator, document=swapped("guilt", "shame"))
    assert v.report["ok"] is False
    canonical = v.report["suite"]["sections"][0]
    assert "shame prototype routes to guilt" in canonical["failures"]
    with pytest.raises(RevisionError, match="fails the regression suite: canonical self-checks"):
        revision_activate(user=admin_user, version=v)
    with pytest.raises(RevisionError, match="fails the regression suite"):
        revision_vote(user=adjudicator, version=v, approve=True)
    assert RuleSetVersion.objects.get(status="active").version == "1"
    assert labels()[0] == ("surprise", "1")


def test_admin_activation_reroutes_gold_and_rollback_restores_it(
    admin_user, adjudicator, gold, django_capture_on_commit_callbacks
):
    before = labels()
    assert before == [("surprise", "1"), ("pride", "1"), ("surprise", "1"), ("pride", "1")]
    v2 = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    assert active_rule_set().version == "1"  # read once: now in the cache
    with django_capture_on_commit_callbacks(execute=True):
        activation = revision_activate(user=admin_user, version=v2)
    assert (activation.how, activation.rerouted, activation.changed) == ("admin", 4, 2)
    assert activation.previous.version == "1"
    assert labels() == [("no-emotion", "2"), ("pride", "2"), ("no-emotion", "2"), ("pride", "2")]
    assert GoldConstrual.objects.filter(label="no-emotion").first().rule == 0
    assert active_rule_set().version == "2"
    change = GoldChange.objects.get(gold__item__source_id="t1-0", why__startswith="rule set")
    assert change.before == {"label": "surprise", "rule_set_version": "1"}
    assert change.after == {"label": "no-emotion", "rule_set_version": "2"}
    assert RuleSetVersion.objects.get(version="1").status == "retired"

    with django_capture_on_commit_callbacks(execute=True):
        revision_activate(user=admin_user, version=RuleSetVersion.objects.get(version="1"))
    assert labels() == before
    assert active_rule_set().version == "1"
    assert RuleSetVersion.objects.get(version="2").status == "retired"
    assert list(RuleSetActivation.objects.order_by("id").values_list("version__version", "how")) == [
        ("1", "initial"), ("2", "admin"), ("1", "admin"),
    ]  # fmt: skip


def test_votes_reaching_the_quorum_activate(settings, adjudicator, other_adjudicator, gold):
    settings.NSM_CONVENTION_QUORUM = 2
    v2 = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    assert revision_vote(user=adjudicator, version=v2, approve=True).status == "proposed"
    assert labels()[0] == ("surprise", "1")
    with pytest.raises(RevisionError, match="carol has already voted on v2"):
        revision_vote(user=adjudicator, version=v2, approve=False)
    assert revision_vote(user=other_adjudicator, version=v2, approve=True).status == "active"
    assert v2.activations.get().how == "vote"
    assert labels()[0] == ("no-emotion", "2")


def test_a_split_vote_rejects_and_a_rollback_can_be_put_to_the_vote(
    settings, adjudicator, other_adjudicator, admin_user, gold
):
    settings.NSM_CONVENTION_QUORUM = 2
    v2 = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    revision_vote(user=adjudicator, version=v2, approve=True)
    assert revision_vote(user=other_adjudicator, version=v2, approve=False).status == "rejected"
    assert labels()[0] == ("surprise", "1")
    # put again, a new ballot: the earlier votes do not count
    revision_reopen(user=adjudicator, version=v2)
    v2.refresh_from_db()
    assert (v2.status, v2.ballot) == ("proposed", 2)
    revision_vote(user=adjudicator, version=v2, approve=True)
    assert revision_vote(user=other_adjudicator, version=v2, approve=True).status == "active"
    # roll back to v1 by vote
    v1_row = RuleSetVersion.objects.get(version="1")
    revision_reopen(user=adjudicator, version=v1_row)
    revision_vote(user=adjudicator, version=v1_row, approve=True)
    revision_vote(user=other_adjudicator, version=v1_row, approve=True)
    assert labels()[0] == ("surprise", "1")
    with pytest.raises(RevisionError, match="v1 is active"):
        revision_reopen(user=adjudicator, version=v1_row)


def test_withdrawing_is_for_proposals(adjudicator):
    v2 = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    assert revision_withdraw(user=adjudicator, version=v2).status == "withdrawn"
    with pytest.raises(RevisionError, match="only a proposed version can be withdrawn"):
        revision_withdraw(user=adjudicator, version=v2)


def test_the_comparison_lists_label_changes_with_accuracy_on_gold_and_a_pass(adjudicator, items, gold):
    items[0].reference_label = "no-emotion"
    items[0].save()
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=NEUTRAL_SURPRISE, legal=True)
    v2 = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    result = revision_comparison(version=v2, parser="lex")
    on_gold = result["gold"]
    assert on_gold["n"] == 4 and on_gold["changed"] == 2
    # t1's reference label says no-emotion: the proposal gets it right, v1 did not
    assert on_gold["old"]["accuracy"].k == 0 and on_gold["new"]["accuracy"].k == 1
    assert on_gold["difference"] == 0.25
    assert on_gold["new"]["accuracy"].low < 0.25 < on_gold["new"]["accuracy"].high
    assert [c["source_id"] for c in on_gold["changes"]] == ["t1-0", "t3-0"]
    on_pass = result["pass"]
    assert on_pass["name"] == "lex" and on_pass["n"] == 4 and on_pass["changed"] == 4
    assert on_pass["old"]["selective_accuracy"].n == 4 and on_pass["new"]["selective_accuracy"].n == 4


def test_a_pilot_that_loses_items_fails_and_items_without_gold_are_named(adjudicator, items):
    # a pilot of four items; t1's gold routes to surprise, its reference label, under v1 only
    item_set_from_items(name="P", items=items, tier="P")
    items[0].reference_label = "surprise"
    items[0].save()
    gold_items(items[:1], [NEUTRAL_SURPRISE])
    v = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    pilot = v.report["pilot"]
    assert (pilot["correct_before"], pilot["correct_after"], pilot["ok"]) == (1, 0, False)
    assert pilot["without_gold"] == ["t2-0", "t3-0", "t4-0"] and pilot["items"] == 4
    assert v.report["ok"] is False


def test_an_absent_pilot_set_is_said_not_failed(adjudicator):
    v = revision_propose(user=adjudicator, document=moved("no-emotion", 0), pilot_item_set="nope")
    assert v.report["pilot"] == {
        "item_set": "nope",
        "found": False,
        "ok": True,
        "note": "no item set named 'nope'",
    }


def test_active_rule_set_reads_the_database_through_the_cache(admin_user, adjudicator):
    v2 = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    assert active_rule_set().version == "1"
    # written behind the services' back: the cache still answers v1 until the key is deleted
    RuleSetVersion.objects.filter(version="1").update(status="retired")
    RuleSetVersion.objects.filter(pk=v2.pk).update(status="active")
    assert active_rule_set().version == "1"
    cache.delete(ACTIVE_KEY)
    assert active_rule_set().version == "2"


def test_an_empty_table_reads_the_packaged_default_and_the_first_proposal_records_it(adjudicator):
    RuleSetActivation.objects.all().delete()
    RuleSetVersion.objects.all().delete()
    cache.clear()
    assert active_rule_set().version == "1"
    assert not RuleSetVersion.objects.exists()  # reading writes nothing
    revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    assert list(RuleSetVersion.objects.order_by("id").values_list("version", "status")) == [
        ("1", "active"), ("2", "proposed"),
    ]  # fmt: skip
