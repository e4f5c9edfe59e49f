"""The evaluation suite on a fixture written for the project (tests/fixtures/evaluation_items.jsonl).

The expected figures are joined by hand from the fixture: each item's routing follows from the
rule table (SPEC section 4), and the comments say which items make each number.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta, binomtest

from nsmcore.counterfactual import counterfactual, read_pair
from nsmcore.evaluation import evaluate, order_winners, random_orders, route_items, routed_from_codes
from nsmcore.evaluation_report import EvaluationError, clopper_pearson
from nsmcore.mapper import RuleSet, load_rule_set, route
from nsmcore.schema import SLOTS, Explication, from_codes
from nsmcore.scoring import score, score_masks

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RULES = load_rule_set()
LABELS = RULES.emotions


def fixture_items() -> list[dict]:
    items = []
    for line in (FIXTURES / "evaluation_items.jsonl").read_text().splitlines():
        obj = json.loads(line)
        meta = {k: obj.pop(k) for k in ("id", "reference_label", "flags") if k in obj}
        items.append({**meta, "explication": obj.pop("explication", obj)})
    return items


@pytest.fixture(scope="module")
def report():
    return evaluate(route_items(fixture_items()), tier="S", pass_name="fixture", orders=30, seed=3)


def cp(k: int, n: int) -> tuple[float, float]:
    """Clopper-Pearson from the beta quantiles, written apart from the module's binomtest."""
    low = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    high = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return low, high


@pytest.mark.parametrize(
    "k, expected", [(12, (0.19, 0.51)), (14, (0.23, 0.57)), (13, (0.21, 0.54)), (11, (0.16, 0.48))]
)
def test_the_papers_interval_table_reproduces(k, expected):
    low, high = clopper_pearson(k, 36)
    assert (round(low, 2), round(high, 2)) == expected


@pytest.mark.parametrize("k, n", [(0, 5), (7, 12), (12, 12), (3, 1000)])
def test_intervals_are_the_exact_beta_quantiles(k, n):
    assert clopper_pearson(k, n) == pytest.approx(cp(k, n))
    exact = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")  # scipy.stats' own
    assert clopper_pearson(k, n) == pytest.approx((exact.low, exact.high), abs=1e-12)


def test_headline_accuracy_abstention_by_type_and_selective_accuracy(report):
    h = report.headline
    # correct: a1 a2 a4 a6 a7 a11 a12; abstain: a8 no-rule, a9 residue, a10 illegal
    assert (h.accuracy.k, h.accuracy.n) == (7, 12)
    assert (h.accuracy.low, h.accuracy.high) == pytest.approx(cp(7, 12))
    assert (h.abstention.k, h.abstention.n) == (3, 12)
    assert {t: p.k for t, p in h.abstention_by_type.items()} == {
        "illegal": 1,
        "schema-residue": 1,
        "no-rule": 1,
    }
    assert (h.selective_accuracy.k, h.selective_accuracy.n) == (7, 9)
    assert (h.selective_accuracy.low, h.selective_accuracy.high) == pytest.approx(cp(7, 9))
    # set-valued (issue 26): the reference among the fired rules of a routed item, all but a5;
    # over the routed items it is the paper's set-valued selective accuracy (its .521 row)
    assert (h.set_accuracy.k, h.set_accuracy.n) == (8, 12)
    assert (h.set_selective_accuracy.k, h.set_selective_accuracy.n) == (8, 9)
    assert (h.set_selective_accuracy.low, h.set_selective_accuracy.high) == pytest.approx(cp(8, 9))
    single = next(s for s in report.distributional.scores if s.scheme == "single-winner")
    assert h.set_accuracy.value == pytest.approx(single.set_accuracy)


def test_per_emotion_selective_accuracy(report):
    rows = {r.emotion: r for r in report.per_emotion.rows}
    guilt = rows["guilt"]  # a1 guilt, a3 routed to shame
    assert (guilt.n, guilt.routed, guilt.selective_accuracy.k) == (2, 2, 1)
    assert (guilt.selective_accuracy.low, guilt.selective_accuracy.high) == pytest.approx(cp(1, 2))
    sadness = rows["sadness"]  # a8 and a9 both abstain
    assert (sadness.n, sadness.routed, sadness.accuracy.k) == (2, 0, 0)
    assert sadness.selective_accuracy.value is None
    assert rows["boredom"].n == 0 and rows["boredom"].accuracy.value is None


def test_confusion_rows_are_normalised_with_an_abstain_column(report):
    c = report.confusion
    assert c.columns[-1] == "abstain" and c.rows == LABELS
    counts = dict(zip(c.rows, c.counts, strict=True))
    assert counts["guilt"][LABELS.index("guilt")] == 1
    assert counts["guilt"][LABELS.index("shame")] == 1
    assert counts["sadness"][-1] == 2 and counts["relief"][-1] == 1
    rates = dict(zip(c.rows, c.rates, strict=True))
    assert rates["pride"][LABELS.index("joy")] == 0.5
    assert rates["boredom"] is None
    assert sum(sum(row) for row in c.counts) == 12


def test_prominent_flows_exclude_the_diagonal_and_abstention(report):
    flows = [(f.gold, f.routed, f.n, f.share_of_gold) for f in report.flows.flows]
    assert flows == [("guilt", "shame", 1, 0.5), ("pride", "joy", 1, 0.5)]


def test_multi_rule_and_which_rule_overruled_which(report):
    m = report.multi_rule
    # a2 a3 (shame, guilt), a4 (pride, joy), a12 (surprise, joy) routed; a9 (guilt, sadness) residue
    assert (m.multi_rule.k, m.multi_rule.n, m.resolved_by_priority, m.abstained) == (5, 12, 4, 1)
    # overrides over every item where both rules fired: a9 abstains (residue), yet guilt's rule
    # ran ahead of sadness's on it; counting routed items only hid that pair (issue 26)
    assert [(o.winner, o.overruled, o.n, o.abstained) for o in m.overrides] == [
        ("shame", "guilt", 2, 0),
        ("surprise", "joy", 1, 0),
        ("guilt", "sadness", 1, 1),
        ("pride", "joy", 1, 0),
    ]
    assert sum(o.n - o.abstained for o in m.overrides) >= m.resolved_by_priority


def test_overrides_count_every_pair_of_rules_that_fired_together():
    """An item firing shame, guilt and sadness routes to shame; guilt's rule still ran ahead of
    sadness's on it. Each pair of fired rules counts, the higher one ahead (the audit of silver-156
    found the guilt/sadness pair of its one three-rule item missing)."""
    three = Explication(
        evaluation="feel-bad", eval_target="self", others_know="can-know", agency="i", realization="not-can"
    )
    assert route(three, RULES).fired == ("shame", "guilt", "sadness")
    two = Explication(evaluation="feel-bad", eval_target="self", agency="i", realization="not-can")
    items = [
        {"id": "t1", "reference_label": "shame", "explication": three.slots()},
        {"id": "t2", "reference_label": "guilt", "explication": two.slots()},
    ]
    m = evaluate(route_items(items), tier="S", pass_name="three", orders=0).multi_rule
    assert [(o.winner, o.overruled, o.n, o.abstained) for o in m.overrides] == [
        ("guilt", "sadness", 2, 0),
        ("shame", "guilt", 1, 0),
        ("shame", "sadness", 1, 0),
    ]


def test_flag_and_residue_rates(report):
    f = report.flag_rates
    assert (f.residue.k, f.residue.n) == (1, 12)
    assert {name: p.k for name, p in f.flags.items()} == {
        "two-construals": 1,
        "unrecoverable": 1,
        "out-of-scope": 0,
    }


def test_distributional_scoring_counts_abstained_items_as_uncovered(report):
    scores = {s.scheme: s for s in report.distributional.scores}
    single = scores["single-winner"]
    # 9 routed items, all with a fired set; a9's fired set (guilt, sadness) holds its gold but
    # a9 abstains: not covered, not in the set. Coverage is 1 - abstention.
    assert single.coverage == pytest.approx(9 / 12)
    assert single.set_accuracy == pytest.approx(8 / 12)  # routed, gold in fired: all but a5
    # top-1 counts an abstention as a miss: the 7 correct, what accuracy counts
    assert single.top1 == pytest.approx(7 / 12) == report.headline.accuracy.value
    # the paper's convention adds a10 (relief): its abstention is uniform, and ties go to rule 0
    assert single.top1_uniform == pytest.approx(8 / 12)
    assert scores["priority-decay"].top3 == pytest.approx(8 / 12)  # a3: guilt second in (shame, guilt)
    assert scores["priority-decay"].top3_uniform == pytest.approx(9 / 12)
    right, wrong = (1 + 0.05) / 1.65, 0.05 / 1.65
    nll = (7 * -math.log(right) + 2 * -math.log(wrong) + 3 * math.log(13)) / 12
    assert single.nll == pytest.approx(nll)


def test_named_swaps_and_random_orders_match_routing_under_reordered_rule_sets():
    items = fixture_items()
    report = evaluate(
        route_items(items), tier="S", pass_name="fixture", orders=12, seed=5, swaps=[("pride", "joy")]
    )
    assert report.sensitivity.canonical.accuracy.k == 7
    assert report.sensitivity.swaps[0].accuracy.k == 6  # a4 (pride, joy) now routes to joy

    def accuracy_under(order) -> int:
        rules = RuleSet("reordered", tuple(RULES.rules[j] for j in order))
        return sum(route(it["explication"], rules).label == it["reference_label"] for it in items)

    brute = [accuracy_under(order) for order in random_orders(len(LABELS), 12, 5)]
    s = report.sensitivity
    assert (s.random_min, s.random_max) == (min(brute) / 12, max(brute) / 12)
    assert s.random_mean == pytest.approx(sum(brute) / len(brute) / 12)
    assert s.canonical_percentile == pytest.approx(100 * sum(b <= 7 for b in brute) / len(brute))


def test_order_winners_equal_route_under_the_reordered_rule_set():
    rng = np.random.default_rng(11)
    codes = np.stack([rng.integers(0, len(s.values), 3000) for s in SLOTS], axis=1)
    explications = [from_codes(tuple(row)) for row in codes.tolist()]
    masks = routed_from_codes(codes, np.zeros(len(codes), dtype=int)).masks
    for order in random_orders(len(LABELS), 4, 7):
        reordered = RuleSet("reordered", tuple(RULES.rules[j] for j in order))
        winners = order_winners(masks, order)
        expected = []
        for e in explications:
            r = route(e, reordered)
            expected.append(-1 if r.rule_index is None else int(order[r.rule_index]))
        assert winners.tolist() == expected


def test_residue_and_illegal_items_abstain_under_every_order():
    guilt = Explication(evaluation="feel-bad", eval_target="self", agency="i")
    items = [
        {"reference_label": "guilt", "explication": guilt.replace(residue="more than the primes say")},
        {"reference_label": "guilt", "explication": {**guilt.slots(), "want": "wish"}},
    ]
    report = evaluate(route_items(items), tier="S", pass_name="t", orders=25)
    assert report.sensitivity.random_max == 0.0
    assert report.headline.abstention.k == 2


def test_score_masks_agrees_with_score():
    rng = np.random.default_rng(2)
    masks = rng.integers(0, 1 << 13, 400, dtype=np.uint64) & rng.integers(0, 1 << 13, 400, dtype=np.uint64)
    gold = rng.integers(0, 13, 400)
    abstained = rng.random(400) < 0.2
    records = [
        ([LABELS[k] for k in range(13) if int(m) >> k & 1], LABELS[g], "no-rule" if a else None)
        for m, g, a in zip(masks, gold, abstained, strict=True)
    ]
    for scheme in ("single-winner", "uniform-fired", "priority-decay"):
        a = score(records, LABELS, scheme=scheme, decay=0.3)
        b = score_masks(masks, gold, abstained, LABELS, scheme=scheme, decay=0.3)
        assert b.as_dict() == pytest.approx(a.as_dict())


def test_causal_consistency_over_every_single_slot_edit(report):
    c = report.consistency
    # 11 legal items, a2 = a3 and a5 = a6: 9 distinct; 30 single-slot edits each
    assert (c.explications, c.rate.n, c.rate.k) == (9, 270, 270)
    assert 0 < c.label_changes < 270


def test_every_section_carries_tier_n_rule_set_and_pass(report):
    doc = json.loads(json.dumps(report.to_dict()))
    evidence = {"tier": "S", "n": 12, "rule_set_version": "1", "rule_set_hash": RULES.content_hash}
    sections = [v for v in doc.values() if isinstance(v, dict) and v is not doc["evidence"]]
    assert len(sections) == 10
    for section in [doc, *sections]:
        assert section["evidence"] == {**evidence, "pass": "fixture"}


def test_counterfactual_benchmark_per_family_and_overall():
    pairs = [
        read_pair(json.loads(line), f"line {n}")
        for n, line in enumerate((FIXTURES / "counterfactual_pairs.jsonl").read_text().splitlines(), 1)
    ]
    cf = counterfactual(pairs, tier="CF", pass_name="fixture")
    rows = {r.family: r for r in (*cf.families, cf.overall)}

    def figures(row):
        return (*(p.k for p in (row.slot, row.label, row.clean, row.causal)), row.slot.n)

    # F1: cf-1 flips others_know cleanly (causal); cf-2's parser missed the flip
    assert figures(rows["F1"]) == (1, 1, 2, 1, 2)
    # F3: cf-3 flips knowledge but also intensity (not clean); cf-4's x' is unreadable
    assert figures(rows["F3"]) == (1, 1, 0, 0, 2)
    assert figures(rows["all"]) == (2, 2, 2, 1, 4)
    assert cf.to_dict()["evidence"]["n"] == 4


def test_a_pinned_target_value_must_be_reached():
    obj = json.loads((FIXTURES / "counterfactual_pairs.jsonl").read_text().splitlines()[0])
    obj["target_values"] = {"others_know": ["can-know", "none"]}  # the wrong direction
    cf = counterfactual([read_pair(obj, "pair")], tier="CF", pass_name="t")
    assert cf.overall.slot.k == 0


@pytest.mark.parametrize(
    "item, message",
    [
        (
            {"id": "x", "reference_label": "elation", "explication": {}},
            "item 2 \\(id 'x'\\): reference_label",
        ),
        ({"reference_label": "joy"}, "item 2: no explication"),
        ({"reference_label": "joy", "explication": {}, "flags": ["sarcastic"]}, "unknown flag 'sarcastic'"),
    ],
)
def test_unusable_items_are_named(item, message):
    with pytest.raises(EvaluationError, match=message) as raised:
        route_items([fixture_items()[0], item])
    assert raised.value.position == 1


def test_unusable_pairs_and_swaps_are_named():
    with pytest.raises(EvaluationError, match="line 3: 'target_slots'"):
        read_pair({"id": "a", "family": "F", "target_slots": ["mood"]}, "line 3")
    with pytest.raises(EvaluationError, match="'envy' is not a rule"):
        evaluate(route_items(fixture_items()), tier="S", pass_name="t", swaps=[("guilt", "envy")])
    with pytest.raises(EvaluationError, match="no items"):
        evaluate(route_items([]), tier="S", pass_name="t")


def test_json_objects_explications_and_aliases_encode_alike():
    pride = Explication(
        trigger="someone-did-something", agency="i", evaluation="feel-good", eval_target="self"
    )
    aliased = {**pride.slots(), "trigger": "someone-did", "residue": " "}
    routed = route_items(
        [
            {"reference_label": "pride", "explication": pride},
            {"reference_label": "pride", "explication": aliased},
        ]
    )
    assert routed.codes[0].tolist() == routed.codes[1].tolist() == list(pride.codes())
    assert routed.residue.tolist() == [False, False]  # a blank residue is no residue
    assert routed.winners.tolist() == [LABELS.index("pride")] * 2


def test_a_parsers_own_label_distribution_is_scored_beside_the_mappers_schemes():
    """Issue 23: joint decoding stores each prediction's label distribution; the suite scores it."""
    rules = load_rule_set()
    pride = {s.name: s.default for s in SLOTS} | {
        "trigger": "someone-did-something", "agency": "i", "realization": "happened",
        "evaluation": "feel-good", "eval_target": "self",
    }  # fmt: skip
    assert route(pride).label == "pride"
    items = [
        {"id": "a", "reference_label": "pride", "explication": pride,
         "label_distribution": {"pride": 0.5, "joy": 0.25, "abstain": 0.25}},
        {"id": "b", "reference_label": "joy", "explication": pride,
         "label_distribution": {"pride": 0.9, "joy": 0.1}},
    ]  # fmt: skip
    report = evaluate(route_items(items, rules), tier="eval", pass_name="p", orders=0)
    own = next(s for s in report.distributional.scores if s.scheme == "parser's own distribution")
    # renormalised over the rule emotions: a gives pride 2/3 and joy 1/3; b gives joy 0.1
    assert own.n == 2
    assert own.nll == pytest.approx((-math.log(2 / 3) - math.log(0.1)) / 2)
    brier_a = (2 / 3 - 1) ** 2 + (1 / 3) ** 2
    brier_b = 0.9**2 + (0.1 - 1) ** 2
    assert own.brier == pytest.approx((brier_a + brier_b) / 2)
    assert (own.top1, own.top3) == (0.5, 1.0)
    # without a distribution on every item, there is no such row; a bad one is named
    del items[1]["label_distribution"]
    schemes = [
        s.scheme
        for s in evaluate(
            route_items(items, rules), tier="eval", pass_name="p", orders=0
        ).distributional.scores
    ]
    assert "parser's own distribution" not in schemes
    items[1]["label_distribution"] = {"joy": -1}
    with pytest.raises(EvaluationError, match=r"item 2 \(id 'b'\): label_distribution\['joy'\] = -1"):
        route_items(items, rules)
