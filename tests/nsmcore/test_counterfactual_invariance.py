"""Invariance pairs in the counterfactual benchmark: no target slot, one emotion on both sides;
slot and clean mean that the parser changed no slot, label that both sides route to the emotion."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nsmcore.counterfactual import (
    CounterfactualPair,
    counterfactual,
    counterfactual_text,
    pair_outcomes,
    read_pair,
)
from nsmcore.evaluation_report import EvaluationError
from nsmcore.mapper import route
from nsmcore.schema import Explication

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

GUILT = Explication(
    trigger="someone-did-something", agency="i", time_direction="before-now", evaluation="feel-bad",
    eval_target="self",
).as_dict()  # fmt: skip
SHAME = {**GUILT, "others_know": "can-know"}


def invariance(id_: str, x, x_prime, emotion: str = "guilt") -> dict:
    return {
        "id": id_,
        "family": "invariance",
        "target_slots": [],
        "x": {"text": "I lied to my friend and I feel terrible.", "emotion": emotion, "explication": x},
        "x_prime": {
            "text": "I told my friend a lie and I feel awful.",
            "emotion": emotion,
            "explication": x_prime,
        },
    }


def test_the_fixture_explications_route_as_the_tests_assume():
    assert route(GUILT).label == "guilt" and route(SHAME).label == "shame"


def test_an_invariance_pair_is_read_with_no_target_slots():
    pair = read_pair(invariance("inv-1", GUILT, GUILT), "line 1")
    assert pair.invariance and pair.target_slots == () and pair.expected == pair.expected_prime == "guilt"


def test_empty_target_slots_with_two_emotions_are_refused_naming_the_field():
    obj = invariance("inv-1", GUILT, SHAME)
    obj["x_prime"]["emotion"] = "shame"
    with pytest.raises(EvaluationError, match="line 4: 'target_slots' must be a non-empty list"):
        read_pair(obj, "line 4")
    with pytest.raises(EvaluationError, match="or empty for an invariance pair"):
        read_pair({"id": "p", "family": "F1", "target_slots": []}, "line 5")


def test_a_parser_that_changes_nothing_passes_every_test():
    cf = counterfactual([read_pair(invariance("inv-1", GUILT, GUILT), "p")], tier="CF", pass_name="t")
    row = cf.families[0]
    assert (row.family, row.target_slots) == ("invariance", ())
    assert [p.k for p in (row.slot, row.label, row.clean, row.causal)] == [1, 1, 1, 1]


def test_a_changed_slot_fails_slot_and_clean_and_a_changed_label_fails_label():
    changed = {**GUILT, "intensity": "very"}  # still guilt: the label holds, slot and clean do not
    flipped = SHAME  # others_know changes and the label with it
    unreadable = None
    pairs = [
        read_pair(invariance("a", GUILT, changed), "a"),
        read_pair(invariance("b", GUILT, flipped), "b"),
        read_pair(invariance("c", GUILT, unreadable), "c"),
    ]
    outcomes = {o.id: o for o in pair_outcomes(pairs)}
    assert (outcomes["a"].slot, outcomes["a"].clean, outcomes["a"].label) == (False, False, True)
    assert (outcomes["b"].slot, outcomes["b"].clean, outcomes["b"].label) == (False, False, False)
    assert outcomes["b"].label_x_prime == "shame"
    assert (outcomes["c"].slot, outcomes["c"].clean, outcomes["c"].label) == (False, False, False)
    assert not any(o.causal for o in outcomes.values())


def test_invariance_and_flip_pairs_are_scored_together_per_family_and_overall():
    lines = (FIXTURES / "counterfactual_pairs.jsonl").read_text().splitlines()
    pairs = [read_pair(json.loads(line), f"line {n}") for n, line in enumerate(lines, 1)]
    pairs.append(read_pair(invariance("inv-1", GUILT, GUILT), "inv"))
    cf = counterfactual(pairs, tier="CF", pass_name="fixture")
    rows = {r.family: r for r in (*cf.families, cf.overall)}
    # the fixture's figures are unchanged (test_evaluation.py), the invariance pair adds one to each
    assert [p.k for p in (rows["F1"].slot, rows["F1"].label, rows["F1"].clean)] == [1, 1, 2]
    assert [p.k for p in (rows["all"].slot, rows["all"].label, rows["all"].clean, rows["all"].causal)] == [
        3, 3, 3, 2,
    ]  # fmt: skip
    assert rows["all"].slot.n == 5
    assert "invariance" in "\n".join(counterfactual_text(cf))


def test_a_pair_built_directly_with_no_targets_and_two_emotions_is_refused():
    pair = CounterfactualPair("d", "invariance", (), "guilt", "shame", GUILT, SHAME)
    with pytest.raises(EvaluationError, match="pair 'd': an invariance pair"):
        counterfactual([pair], tier="CF", pass_name="t")


def test_a_flip_pair_still_needs_its_slot_to_move():
    flip = CounterfactualPair("f", "F1", ("others_know",), "guilt", "shame", GUILT, GUILT)
    (outcome,) = pair_outcomes([flip])
    assert (outcome.slot, outcome.clean, outcome.label) == (False, True, False)
    pinned = CounterfactualPair(
        "g", "F1", ("others_know",), "guilt", "shame", GUILT, SHAME, {"others_know": ("none", "can-know")}
    )
    assert pair_outcomes([pinned])[0].causal


def test_the_text_table_keeps_its_columns_apart_whatever_the_names():
    """The walkthrough saw "invariance" and a long slot list run into the next column."""
    lines = (FIXTURES / "counterfactual_pairs.jsonl").read_text().splitlines()
    pairs = [read_pair(json.loads(line), f"line {n}") for n, line in enumerate(lines, 1)]
    pairs.append(read_pair(invariance("inv-1", GUILT, GUILT), "inv"))
    long_family = {**invariance("inv-2", GUILT, GUILT), "family": "a-very-long-family-name"}
    pairs.append(read_pair(long_family, "long"))
    table = counterfactual_text(counterfactual(pairs, tier="CF", pass_name="fixture"))
    header, rows = table[1], table[2:]
    names = header.split()
    assert names == ["family", "target", "slots", "n", "slot", "label", "clean", "causal"]
    for row in rows:
        cells = re.split(r"\s{2,}", row.strip())
        assert len(cells) == 7, row  # family, slots, n and the four figures, each apart
        assert len(row) == len(header), (row, header)  # and under their heads
    families = [re.split(r"\s{2,}", row.strip())[0] for row in rows]
    assert "invariance" in families and "a-very-long-family-name" in families
