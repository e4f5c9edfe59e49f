"""Sets and pairs through the services: what is stored, every refusal named by its field with
nothing written, and versions (freeze, then a new version that copies the pairs)."""

from __future__ import annotations

import pytest

from annotator.models import Item
from contrasts.models import MinimalPair, PairSet
from contrasts.services import (
    ContrastConflict,
    ContrastError,
    pair_add,
    pair_set_create,
    pair_set_freeze,
    pair_set_new_version,
    pairs_add,
)
from tests.contrasts.conftest import FLIP, INTENSITY, INVARIANT

pytestmark = pytest.mark.django_db


def test_a_set_starts_open_at_version_1_and_its_name_is_taken_by_it(adjudicator):
    made = pair_set_create(user=adjudicator, name="agency-flips", note=" first ")
    assert (made.version, made.is_open, made.note, made.created_by) == (1, True, "first", adjudicator)
    with pytest.raises(ContrastConflict, match="a set named agency-flips exists \\(newest v1\\)"):
        pair_set_create(user=adjudicator, name="agency-flips")
    with pytest.raises(ContrastError) as refused:
        pair_set_create(user=adjudicator, name="Agency Flips")
    assert set(refused.value.problems) == {"name"}
    assert PairSet.objects.count() == 1


def test_pairs_take_their_from_values_from_gold_and_a_family_by_default(pair_set, gold_round):
    flip, invariant, intensity = pair_set.pairs.order_by("id")
    assert flip.targets == {"agency": ["i", "someone-else"]}
    assert (flip.expected, flip.expected_label(), flip.family) == ("joy", "joy", "F-agency")
    assert (invariant.targets, invariant.invariance, invariant.expected) == ({}, True, "")
    assert (invariant.family, invariant.expected_label()) == ("invariance", "joy")  # the item's own label
    assert intensity.targets == {"intensity": ["plain", "very"]}
    unnamed = pair_add(
        user=None, pair_set=pair_set, item="t2-0", text="I was angry when my bike was stolen by a stranger.",
        targets={"others_know": "can-know", "body": "yes"}, expected="anger",
    )  # fmt: skip
    assert unnamed.family == "others_know+body" and unnamed.targets["body"] == ["no", "yes"]


@pytest.fixture
def no_gold_item(db) -> Item:
    return Item.objects.create(
        source="mine", source_id="m-1", text="I was scared when the lights went out.", reference_label="fear"
    )


def test_an_item_without_gold_needs_each_target_slots_from_value(pair_set, no_gold_item):
    values = {"item": no_gold_item.pk, "text": "I was scared when the lights went out in the crowded hall."}
    with pytest.raises(ContrastError) as refused:
        pair_add(
            user=None, pair_set=pair_set, targets={"others_know": "can-know"}, expected="shame", **values
        )
    assert "from.others_know" in refused.value.problems and "no resolved gold" in str(refused.value)
    pair = pair_add(
        user=None, pair_set=pair_set, targets={"others_know": "can-know"},
        from_values={"others_know": "none"}, expected="shame", **values,
    )  # fmt: skip
    assert pair.targets == {"others_know": ["none", "can-know"]}


BAD = [
    ({"targets": {"mood": "low"}}, "targets.mood", "unknown slot"),
    ({"targets": {"agency": "everyone"}}, "targets.agency", "'everyone' is not a value of agency"),
    ({"targets": {"agency": "i"}}, "targets.agency", "i on both sides"),
    ({"expected": "elation"}, "expected", "'elation' is not an emotion of the active rule set"),
    ({"expected": ""}, "expected", "choose the label"),
    ({"text": "   "}, "text", "write the rewritten text"),
    ({"text": "I was proud\x00 when"}, "text", "NUL"),
    ({"text": "I was proud when I won the chess final."}, "text", "the item's own text"),
    ({"item": "no-such-id"}, "item", "no item with id or source id 'no-such-id'"),
    ({"item": 10**9}, "item", "no item with id 1000000000"),
    ({"targets": {}}, "targets", "or mark the pair as an invariance pair"),
    ({"invariance": True}, "targets", "an invariance pair changes no slot"),
    ({"from_values": {"agency": "none"}}, "from.agency", "the item's gold has agency=i"),
    ({"from_values": {"body": "yes"}}, "from.body", "body is not a target slot"),
    ({"family": "x" * 65}, "family", "at most 64 characters"),
    ({"note": "a\x00"}, "note", "NUL"),
]


@pytest.mark.parametrize("change, field, message", BAD)
def test_a_bad_pair_is_refused_naming_its_field_and_nothing_is_written(pair_set, change, field, message):
    before = MinimalPair.objects.count()
    with pytest.raises(ContrastError) as refused:
        pair_add(user=None, pair_set=pair_set, **{**FLIP, **change})
    assert field in refused.value.problems, refused.value.problems
    assert message in refused.value.problems[field]
    assert refused.value.api_status == 400
    assert MinimalPair.objects.count() == before


def test_an_invariance_pair_takes_no_expected_label(pair_set):
    with pytest.raises(ContrastError) as refused:
        pair_add(user=None, pair_set=pair_set, **{**INVARIANT, "expected": "joy"})
    assert set(refused.value.problems) == {"expected"}


def test_the_api_body_nests_a_slot_under_its_field(pair_set):
    with pytest.raises(ContrastError) as refused:
        pair_add(user=None, pair_set=pair_set, **{**FLIP, "targets": {"agency": "i"}, "expected": "elation"})
    body = refused.value.api_body()
    assert set(body) == {"targets", "expected"} and list(body["targets"]) == ["agency"]


def test_several_pairs_are_added_all_or_none(pair_set):
    good = {**INTENSITY, "text": "I was thrilled when it snowed on my birthday."}
    with pytest.raises(ContrastError) as refused:
        pairs_add(
            user=None, pair_set=pair_set, rows=[good, {**FLIP, "expected": "elation"}], where=["l1", "l2"]
        )
    assert list(refused.value.problems) == ["l2: expected"]
    assert pair_set.pairs.count() == 3
    pairs_add(user=None, pair_set=pair_set, rows=[good, good])
    assert pair_set.pairs.count() == 5


def test_a_frozen_set_takes_no_pair_and_freezes_once(pair_set, adjudicator):
    frozen = pair_set_freeze(user=adjudicator, pair_set=pair_set)
    assert not frozen.is_open and frozen.frozen_by == adjudicator
    with pytest.raises(ContrastConflict, match="pilot-pairs@v1 is frozen: open a new version") as refused:
        pair_add(user=None, pair_set=frozen, **{**FLIP, "text": "I was happy when my cousin won the final."})
    assert refused.value.api_status == 409 and frozen.pairs.count() == 3
    with pytest.raises(ContrastConflict, match="already frozen"):
        pair_set_freeze(user=adjudicator, pair_set=frozen)


def test_an_empty_set_is_not_frozen(adjudicator):
    empty = pair_set_create(user=adjudicator, name="empty")
    with pytest.raises(ContrastConflict, match="has no pairs yet"):
        pair_set_freeze(user=adjudicator, pair_set=empty)
    assert PairSet.objects.get(pk=empty.pk).is_open


def test_a_new_version_copies_the_pairs_of_the_newest_frozen_one(pair_set, adjudicator, admin_user):
    with pytest.raises(ContrastConflict, match="is open: freeze it first"):
        pair_set_new_version(user=admin_user, pair_set=pair_set)
    pair_set_freeze(user=adjudicator, pair_set=pair_set)
    second = pair_set_new_version(user=admin_user, pair_set=pair_set)
    assert (second.name, second.version, second.is_open, second.created_by) == (
        "pilot-pairs",
        2,
        True,
        admin_user,
    )
    old, new = list(pair_set.pairs.order_by("id")), list(second.pairs.order_by("id"))
    keep = ("item_id", "text", "family", "targets", "invariance", "expected", "created_by_id", "created_at")
    assert [[getattr(p, f) for f in keep] for p in old] == [[getattr(p, f) for f in keep] for p in new]
    assert not {p.pk for p in old} & {p.pk for p in new}
    pair_add(
        user=adjudicator, pair_set=second, **{**FLIP, "text": "I was happy when my cousin won the final."}
    )
    assert (pair_set.pairs.count(), second.pairs.count()) == (3, 4)  # the frozen version is unchanged
    with pytest.raises(ContrastConflict, match="pilot-pairs@v2 is newer"):
        pair_set_new_version(user=admin_user, pair_set=PairSet.objects.get(pk=pair_set.pk))
