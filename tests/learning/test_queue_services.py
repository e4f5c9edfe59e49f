"""Computing and serving a round's learning queue from the database: the parser's posteriors rank
the items, each annotator's pending items follow the ranking in the places they already held, done
work keeps its place, the random share becomes an item set with its weights, answers and verifier
judgements raise the score, and bad settings are refused with nothing written."""

import pytest

from annotator.models import Assignment, ItemSetMember
from annotator.services import annotation_submit
from learning.models import QueueEntry, QueuePolicy
from learning.services import QueuePolicyError, queue_compute, queue_policy_set
from nsmcore.render import render
from nsmcore.schema import Explication
from nsmcore.verifier import text_key
from tests.factories import PRED
from tests.learning.conftest import DOUBT
from verification.models import LineVerification


def compute(round_, **settings):
    policy = queue_policy_set(
        round_=round_, user=None, **({"order": "informative", "parser": "clf"} | settings)
    )
    return policy, queue_compute(policy=policy)


def queue_of(user, round_):
    return list(
        Assignment.objects.filter(round=round_, annotator=user)
        .order_by("position")
        .values_list("item_id", flat=True)
    )


@pytest.mark.django_db
def test_the_least_certain_items_come_first_for_every_annotator(clf_round, annotator, other_annotator):
    before = {a.pk: a.position for a in Assignment.objects.filter(round=clf_round)}
    policy, result = compute(clf_round)
    items = list(clf_round.item_set.items.order_by("id").values_list("id", flat=True))
    by_doubt = [i for _, i in sorted(zip(DOUBT, items, strict=True), reverse=True)]
    entries = list(QueueEntry.objects.filter(policy=policy).order_by("rank"))
    assert [e.item_id for e in entries] == by_doubt
    assert [round(e.change, 4) for e in entries] == sorted((round(d, 4) for d in DOUBT), reverse=True)
    assert all(e.label == "pride" and e.posteriors for e in entries)
    for user in (annotator, other_annotator):
        mine = queue_of(user, clf_round)
        assert mine == [i for i in by_doubt if i in mine]
    # the places are the ones the assignments held: only which item sits where changed
    after = Assignment.objects.filter(round=clf_round)
    assert sorted(a.position for a in after) == sorted(before.values())
    assert result.items == 4 and result.with_posteriors == 4 and result.parser == "clf 1"
    policy.refresh_from_db()
    assert policy.computed_at is not None and policy.computed_with == "clf 1"


@pytest.mark.django_db
def test_done_work_keeps_its_place(clf_round, annotator):
    first = Assignment.objects.filter(round=clf_round, annotator=annotator).order_by("position").first()
    annotation_submit(assignment=first, user=annotator, values=PRED, base_version=0)
    compute(clf_round)
    first.refresh_from_db()
    assert first.status == "done" and first.position == 0
    pending = Assignment.objects.filter(round=clf_round, annotator=annotator, status="pending").order_by(
        "position"
    )
    entries = {e.item_id: e.rank for e in QueueEntry.objects.filter(policy__round=clf_round)}
    ranks = [entries[a.item_id] for a in pending]
    assert ranks == sorted(ranks)


@pytest.mark.django_db
def test_mixed_keeps_a_random_share_as_an_item_set_with_its_weights(clf_round):
    policy, result = compute(clf_round, order="mixed", random_share=0.5, seed=11)
    randoms = QueueEntry.objects.filter(policy=policy, random=True)
    assert randoms.count() == 2 == result.random
    assert set(randoms.values_list("weight", flat=True)) == {2.0}  # 4 items, 2 in the share
    assert set(QueueEntry.objects.filter(policy=policy, random=False).values_list("weight", flat=True)) == {
        0.0
    }
    policy.refresh_from_db()
    members = set(ItemSetMember.objects.filter(item_set=policy.random_set).values_list("item_id", flat=True))
    assert members == set(randoms.values_list("item_id", flat=True))
    assert policy.random_set.tier == clf_round.item_set.tier and policy.random_set.size == 2
    # computed again with the same seed: the same share, the same item set
    again, _ = compute(clf_round, order="mixed", random_share=0.5, seed=11)
    again.refresh_from_db()
    assert again.random_set_id == policy.random_set_id
    assert (
        set(QueueEntry.objects.filter(policy=again, random=True).values_list("item_id", flat=True)) == members
    )


@pytest.mark.django_db
def test_disagreements_so_far_raise_the_expected_conflict(clf_round, annotator, other_annotator):
    policy, _ = compute(clf_round)
    assert set(QueueEntry.objects.filter(policy=policy).values_list("conflict", flat=True)) == {0.0}
    # bob says agency=someone-else where alice keeps agency=i, on the first item
    for user, values in ((annotator, PRED), (other_annotator, PRED | {"agency": "someone-else"})):
        a = Assignment.objects.filter(round=clf_round, annotator=user).order_by("item_id").first()
        annotation_submit(assignment=a, user=user, values=values, base_version=0)
    policy, result = compute(clf_round)
    assert result.annotated == 1
    conflicts = list(QueueEntry.objects.filter(policy=policy).values_list("conflict", flat=True))
    # every item's posterior puts agency on "i", whose rate is (1 + 2 x 1) / (1 + 2) = 1 over 12 slots
    assert conflicts == [pytest.approx(1 / 12)] * 4


@pytest.mark.django_db
def test_lines_the_verifier_rejected_raise_the_score(clf_round):
    item = clf_round.item_set.items.order_by("id").first()  # the parser is sure of it: change 0
    lines = [line.text for line in render(Explication.from_dict(PRED))]
    sha = text_key(item.text_for(clf_round.text_field))
    for k, line in enumerate(lines):
        LineVerification.objects.create(
            model="nli@1", text_sha=sha, line=line, p_entailment=0.1 if k == 0 else 0.9
        )
    policy, result = compute(clf_round)
    entry = QueueEntry.objects.get(policy=policy, item=item)
    assert entry.rejected == pytest.approx(1 / len(lines))
    assert result.verified == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"order": "clever"}, "order"),
        ({"order": "mixed", "random_share": 1.0}, "random_share"),
        ({"order": "mixed", "random_share": 0.0}, "random_share"),
        ({"order": "mixed", "parser": "nobody"}, "parser"),
        ({"order": "mixed", "seed": -1}, "seed"),
        ({"order": "mixed", "retrain_every": -5}, "retrain_every"),
    ],
)
def test_bad_settings_are_refused_by_name_and_nothing_is_written(clf_round, settings, field):
    with pytest.raises(QueuePolicyError) as refused:
        queue_policy_set(round_=clf_round, user=None, **settings)
    assert refused.value.field == field
    assert not QueuePolicy.objects.exists()


@pytest.mark.django_db
def test_a_parser_without_posteriors_leaves_its_items_as_uncertain_as_can_be(prefilled_round):
    policy, result = compute(prefilled_round, parser="lex")
    assert result.with_posteriors == 0
    entries = QueueEntry.objects.filter(policy=policy)
    assert not entries.filter(posteriors=True).exists()
    assert all(e.change > 0.9 for e in entries)  # uniform posteriors: pride is one label of many
