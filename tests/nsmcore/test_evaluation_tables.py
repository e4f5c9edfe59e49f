"""Issue 26: the slot-value x routed-label table and the four-cell split of two passes with
McNemar's exact test, recomputed here from the items by hand."""

import pytest
from scipy.stats import binomtest

from nsmcore.evaluation import correct_by_id, evaluate, route_items
from nsmcore.evaluation_tables import four_cell
from nsmcore.evaluation_text import report_text
from nsmcore.mapper import load_rule_set
from nsmcore.schema import SLOTS

RULES = load_rule_set("1")
BASE = {s.name: s.default for s in SLOTS}
PRIDE = BASE | {
    "trigger": "someone-did-something", "agency": "i", "realization": "happened",
    "evaluation": "feel-good", "eval_target": "self",
}  # fmt: skip
SURPRISE = BASE | {"evaluation": "neither", "knowledge": "not-know", "realization": "happened"}


def items(*rows):
    return [{"id": i, "reference_label": label, "explication": e} for i, label, e in rows]


def test_a_cell_counts_the_items_with_that_value_routed_to_that_label_and_names_them():
    routed = route_items(
        items(
            ("a", "pride", PRIDE), ("b", "sadness", SURPRISE), ("c", "surprise", SURPRISE), ("d", "joy", {})
        ),
        RULES,
    )
    report = evaluate(routed, tier="t", pass_name="p", orders=0)
    table = report.slot_labels
    assert report.to_dict()["slot_labels"]["rows"][0] == table.rows[0].to_dict()
    text = report_text(report).split("stated slot values -> routed label")[1]
    assert "knowledge=not-know                   -> surprise         2 of 2" in text
    assert "experiencer=i" not in text  # a slot's default states nothing
    assert table.columns[-1] == "abstain" and table.illegal == 1  # d has no slots
    not_know = table.row("knowledge", "not-know")
    surprise = table.columns.index("surprise")
    assert (not_know.n, not_know.counts[surprise], not_know.ids[surprise]) == (2, 2, ("b", "c"))
    assert sum(not_know.counts) == not_know.n
    agency = table.row("agency", "i")
    assert agency.ids[table.columns.index("pride")] == ("a",)
    # every legal item sits once in each slot's rows
    for slot in SLOTS:
        assert sum(r.n for r in table.rows if r.slot == slot.name) == 3
    assert table.row("knowledge", "know") is None  # no item takes it: no row


def test_four_cell_and_mcnemar_as_the_paper_reads_them():
    # silver-156, A vs B: both right 38, only A 19, only B 1, both wrong 98
    a = {i: i < 57 for i in range(156)}
    b = {i: i < 38 or i == 57 for i in range(156)}
    split = four_cell(a, b)
    assert (split.both, split.only_a, split.only_b, split.neither, split.n) == (38, 19, 1, 98, 156)
    assert split.p_value == pytest.approx(binomtest(19, 20, 0.5).pvalue, rel=1e-12)
    assert split.to_dict()["mcnemar_exact_p"] < 0.001
    # only the shared items count; no discordant item is p = 1
    assert four_cell({1: True, 2: False}, {1: True, 3: True}).to_dict() == {
        "n": 1, "both_right": 1, "only_a": 0, "only_b": 0, "both_wrong": 0, "mcnemar_exact_p": 1.0,
    }  # fmt: skip
    assert four_cell({1: True, 2: False}, {1: False, 2: True}).p_value == pytest.approx(1.0)


def test_a_pass_is_right_where_it_routes_to_the_reference_and_ids_are_needed():
    routed = route_items(items(("a", "pride", PRIDE), ("b", "sadness", SURPRISE), ("c", "joy", {})), RULES)
    assert correct_by_id(routed) == {"a": True, "b": False, "c": False}
    anonymous = route_items([{"reference_label": "pride", "explication": PRIDE}], RULES)
    with pytest.raises(ValueError, match="needs an id on every item"):
        correct_by_id(anonymous)
