"""The learning queue's order (nsmcore.queue): the label-change probability is exact, the score's
parts are what the docstring says, the random share is a seeded simple random sample spread
evenly through the informative order, and ties are broken for diversity."""

import itertools
import json

import numpy as np
import pytest

from nsmcore.decoding import decode, label_mass, normalise, region_scores, rule_lattice
from nsmcore.mapper import ABSTAIN, route
from nsmcore.parsers.base import decoded_result
from nsmcore.queue import (
    INFORMATIVE,
    MIXED,
    RANDOM,
    QueueError,
    _diverse,
    conflict_rates,
    expected_conflict,
    interleave,
    posteriors_of,
    posteriors_to_log,
    random_share,
    rank_items,
)
from nsmcore.schema import SLOTS, Explication

LATTICE = rule_lattice()
GUILT = Explication(evaluation="feel-bad", eval_target="self", agency="i").slots()  # the sandbox's guilt


def one_hot_log(
    explication: dict[str, str], spread: dict[str, dict[str, float]] | None = None
) -> list[np.ndarray]:
    """Per-slot log-probabilities: certain of ``explication`` except the slots in ``spread``."""
    rows = {s.name: {explication[s.name]: 1.0} for s in SLOTS} | (spread or {})
    return posteriors_to_log([rows])


def test_label_mass_is_the_exact_probability_of_the_label_by_enumeration():
    # three slots spread over two values each: 8 assignments, each routed by the mapper itself
    spread = {
        "others_know": {"can-know": 0.3, "none": 0.7},
        "agency": {"i": 0.6, "someone-else": 0.4},
        "evaluation": {"feel-bad": 0.8, "feel-good": 0.2},
    }
    logp = one_hot_log(GUILT, spread)
    expected: dict[str, float] = {}
    for values in itertools.product(*(d.items() for d in spread.values())):
        explication = dict(GUILT) | {slot: v for slot, (v, _) in zip(spread, values, strict=True)}
        p = float(np.prod([q for _, q in values]))
        label = route(explication).label
        expected[label] = expected.get(label, 0.0) + p
    for label, p in expected.items():
        assert label_mass(LATTICE, logp, [label])[0] == pytest.approx(p, abs=1e-6), label
    assert label_mass(LATTICE, logp, ["joy" if "joy" not in expected else "fear"])[0] == pytest.approx(0.0)


def test_label_mass_agrees_with_the_whole_lattices_region_masses():
    rng = np.random.default_rng(4)
    logp = normalise([rng.normal(size=(40, len(s.values))) * 2 for s in SLOTS])
    _, _, masses = region_scores(LATTICE, logp)
    labels = [ABSTAIN, *LATTICE.labels]
    picked = [labels[k % len(labels)] for k in range(40)]
    got = label_mass(LATTICE, logp, picked)
    want = [masses[i, labels.index(label)] for i, label in enumerate(picked)]
    assert got == pytest.approx(want, abs=1e-5)


def test_a_confident_parser_ranks_below_an_unsure_one():
    sure = one_hot_log(GUILT)
    unsure = one_hot_log(GUILT, {"others_know": {"can-know": 0.5, "none": 0.5}})
    logp = [np.vstack([a, b]) for a, b in zip(sure, unsure, strict=True)]
    label = route(GUILT).label
    queue = rank_items(["sure", "unsure"], logp, [label, label], order=INFORMATIVE)
    assert [r.id for r in queue] == ["unsure", "sure"]
    assert queue[1].change == pytest.approx(0.0, abs=1e-9)
    assert queue[0].change == pytest.approx(0.5, abs=1e-6)  # others_know moves guilt to shame
    assert all(not r.random and r.weight == 0 for r in queue)


def test_conflict_and_rejected_lines_raise_the_score_as_documented():
    logp = [np.vstack([a, a]) for a in one_hot_log(GUILT, {"agency": {"i": 0.5, "someone-else": 0.5}})]
    label = route(GUILT).label
    rates = [np.zeros(len(s.values)) for s in SLOTS]
    queue = rank_items(["a", "b"], logp, [label, label], order=INFORMATIVE, rates=rates, rejected=[0.0, 0.5])
    first, second = queue
    assert first.id == "b" and first.rejected == 0.5
    assert first.score == pytest.approx(first.change * (1 + first.conflict) * 1.5)
    assert second.score == pytest.approx(second.change * (1 + second.conflict))


def test_conflict_rates_by_hand():
    a = dict(GUILT)
    b = dict(GUILT) | {"agency": "someone-else"}
    # three items answered twice: two agree on agency=i, one splits i / someone-else; one single answer
    rates = conflict_rates([[a, a], [a, a], [a, b], [b]])
    agency = [s.name for s in SLOTS].index("agency")
    values = SLOTS[agency].values
    base = 1 / 3  # one of three items split on agency
    assert rates[agency][values.index("i")] == pytest.approx((1 + 2 * base) / (3 + 2))
    assert rates[agency][values.index("someone-else")] == pytest.approx((1 + 2 * base) / (1 + 2))
    assert rates[agency][values.index("none")] == pytest.approx(base)  # never chosen: the slot's own rate
    experiencer = [s.name for s in SLOTS].index("experiencer")
    assert rates[experiencer].max() == 0.0  # nobody disagreed there


def test_a_convention_counts_where_the_posterior_splits_between_its_values():
    logp = one_hot_log(GUILT, {"agency": {"i": 0.5, "someone-else": 0.5}})
    assert expected_conflict(logp)[0] == 0.0
    with_convention = expected_conflict(logp, conventions=[("agency", "i", "someone-else")])[0]
    assert with_convention == pytest.approx(4 * 0.5 * 0.5 / len(SLOTS))
    assert expected_conflict(logp, conventions=[("agency", "i", "nobody-knows")])[0] == 0.0  # not a value


def test_the_random_share_is_seeded_and_the_same_whatever_the_scores():
    mask = random_share(100, 0.2, seed=7)
    assert mask.sum() == 20
    assert (random_share(100, 0.2, seed=7) == mask).all()
    assert not (random_share(100, 0.2, seed=8) == mask).all()
    rng = np.random.default_rng(0)
    labels = ["joy"] * 100
    one = rank_items(list(range(100)), normalise([rng.normal(size=(100, len(s.values))) for s in SLOTS]),
                     labels, order=MIXED, share=0.2, seed=7)  # fmt: skip
    other = rank_items(list(range(100)), normalise([rng.normal(size=(100, len(s.values))) for s in SLOTS]),
                       labels, order=MIXED, share=0.2, seed=7)  # fmt: skip
    assert {r.id for r in one if r.random} == {r.id for r in other if r.random} == set(np.flatnonzero(mask))
    assert {r.weight for r in one if r.random} == {5.0} and {r.weight for r in one if not r.random} == {0.0}


def test_mixed_spreads_the_random_share_evenly():
    order = interleave(list("abcdefgh"), ["X", "Y"])
    assert order == ["a", "b", "c", "d", "X", "e", "f", "g", "h", "Y"]
    assert interleave([], ["X"]) == ["X"] and interleave(["a"], []) == ["a"]


def test_random_order_is_a_seeded_permutation_with_weight_one():
    logp = normalise([np.zeros((30, len(s.values))) for s in SLOTS])
    queue = rank_items(list(range(30)), logp, ["joy"] * 30, order=RANDOM, seed=3)
    assert sorted(r.id for r in queue) == list(range(30))
    assert [r.id for r in queue] != list(range(30))
    assert all(r.random and r.weight == 1.0 for r in queue)
    assert [r.id for r in rank_items(list(range(30)), logp, ["joy"] * 30, order=RANDOM, seed=3)] == [
        r.id for r in queue
    ]


def test_ties_are_served_round_robin_over_labels():
    scores = np.array([0.5] * 6 + [0.9])
    labels = ["joy", "joy", "joy", "fear", "fear", "anger", "pride"]
    assert _diverse(list(range(7)), scores, labels) == [6, 0, 3, 5, 1, 4, 2]


def test_bad_orders_and_shares_are_refused_by_name():
    logp = normalise([np.zeros((2, len(s.values))) for s in SLOTS])
    with pytest.raises(QueueError, match="order 'smart'"):
        rank_items([1, 2], logp, ["joy", "joy"], order="smart")
    with pytest.raises(QueueError, match=r"random share 1\.5"):
        rank_items([1, 2], logp, ["joy", "joy"], order=MIXED, share=1.5)
    with pytest.raises(QueueError, match="2 items but 1 labels"):
        rank_items([1, 2], logp, ["joy"], order=RANDOM)


def test_posteriors_are_read_from_raw_output_and_missing_ones_are_uniform():
    raw = json.dumps({"decoding": "joint", "posteriors": {"agency": {"i": 0.9, "someone-else": 0.1}}})
    read = posteriors_of(raw)
    assert read == {"agency": {"i": 0.9, "someone-else": 0.1}}
    assert posteriors_of("not json") is None and posteriors_of('{"values": {}}') is None
    # in another order than the schema's, and all zero (uniform, as if not given)
    reordered = {"agency": {"someone-else": 0.1, "i": 0.9}, "body": {"yes": 0.0, "no": 0.0}}
    logp = posteriors_to_log([read, None, reordered])
    agency = [s.name for s in SLOTS].index("agency")
    assert np.exp(logp[agency][0]).tolist() == pytest.approx([0.9, 0.1, 0.0, 0.0])
    assert np.exp(logp[agency][1]).tolist() == pytest.approx([0.25] * 4)
    assert np.exp(logp[agency][2]).tolist() == pytest.approx([0.9, 0.1, 0.0, 0.0])
    assert np.exp(logp[0][0]).tolist() == pytest.approx([1 / 3] * 3)  # experiencer: not given
    body = [s.name for s in SLOTS].index("body")
    assert np.exp(logp[body][2]).tolist() == pytest.approx([0.5, 0.5])
    assert [a.shape for a in posteriors_to_log([])] == [(0, len(s.values)) for s in SLOTS]


def test_a_joint_decodings_posteriors_are_read_alone_and_exactly():
    """The raw output a parser writes (nsmcore.parsers.base.decoded_result): its posteriors object
    is read without the rest, and is the one json.loads finds, whatever precedes it."""
    rng = np.random.default_rng(3)
    logp = normalise([rng.normal(size=(5, len(s.values))) for s in SLOTS])
    for k, decoded in enumerate(decode(logp, lattice=LATTICE)):
        kept = {
            s.name: dict(zip(s.values, logp[j][k].round(4).tolist(), strict=True))
            for j, s in enumerate(SLOTS)
        }
        raw = decoded_result(decoded, 0.1, mean_logprob=kept).raw_output
        assert raw.startswith('{"decoding":"joint",')
        assert posteriors_of(raw) == json.loads(raw)["posteriors"] != json.loads(raw)["mean_logprob"]
    # a label or a label mass named like the key comes first: the object is still the one read
    named = (
        '{"decoding":"joint","label":"posteriors","label_mass":{"posteriors":0.5},'
        '"posteriors":{"body":{"no":1}}}'
    )
    assert posteriors_of(named) == {"body": {"no": 1}}
    assert posteriors_of('{"decoding":"joint","label":"joy","values":{}}') is None
    assert posteriors_of('{"decoding":"joint","posteriors":{"body":') is None  # cut short


def test_the_summary_says_when_an_order_reaches_randoms_final_accuracy():
    from nsmcore.queue_simulation import Point, summarise

    def curve(*routed):
        return [Point(10 * (k + 1), r, 0.5 + r) for k, r in enumerate(routed)]

    summary = summarise({
        "random": [curve(0.1, 0.2, 0.3), curve(0.1, 0.2, 0.5)],  # final mean 0.4
        "informative": [curve(0.2, 0.4, 0.4), curve(0.2, 0.4, 0.4)],  # 0.4 at 20 items
        "mixed": [curve(0.1, 0.2, 0.3), curve(0.1, 0.2, 0.3)],  # never: 0.1 short
    })  # fmt: skip
    assert summary["target"] == {"routed": 0.4, "per_slot": 0.9, "labelled": 30}
    assert summary["reach"]["informative"] == {
        "labelled": 20, "share_of_items": round(20 / 30, 4), "final_shortfall": 0.0, "band": [0.4, 0.4],
    }  # fmt: skip
    assert summary["reach"]["mixed"]["labelled"] is None
    assert summary["reach"]["mixed"]["final_shortfall"] == pytest.approx(0.1)
    assert summary["random_band"]["routed"] == [0.3, 0.5]
    assert summary["curves"]["random"][2] | {} == {
        "labelled": 30, "routed": 0.4, "routed_low": 0.3, "routed_high": 0.5,
        "per_slot": 0.9, "per_slot_low": 0.8, "per_slot_high": 1.0,
    }  # fmt: skip


def test_a_band_chart_draws_each_curve_inside_its_band():
    from nsmcore.charts import band_chart

    chart = band_chart({"a": [(0, 0.5, 0.4, 0.6), (10, 0.7, 0.6, 0.8)]}, width=100, height=100, pad=10)
    (series,) = chart["series"]
    points = [tuple(map(float, p.split(","))) for p in series["points"].split()]
    band = [tuple(map(float, p.split(","))) for p in series["band"].split()]
    assert [x for x, _ in points] == [10.0, 110.0]
    # the band: the highs left to right, then the lows right to left; y grows downwards
    assert [x for x, _ in band] == [10.0, 110.0, 110.0, 10.0]
    for (_x, y), (_, high), (_, low) in zip(points, band[:2], band[:1:-1], strict=True):
        assert high < y < low
