"""Joint decoding inside the rules: exact against brute force over all 1,866,240 assignments, for
any rule set; region masses and region posteriors likewise; the abstention gap; bad scores refused
by name."""

import numpy as np
import pytest

from nsmcore.decoding import (
    DecodingError,
    RuleLattice,
    as_log_arrays,
    choose_gap,
    decode,
    region_posteriors,
)
from nsmcore.mapper import ABSTAIN, load_rule_set, parse_rule_set, route, route_codes
from nsmcore.schema import SLOTS
from nsmcore.space import all_codes


@pytest.fixture(scope="module")
def space():
    codes = all_codes()
    return codes.astype(np.int64), codes


def random_scores(n, seed, concentration=0.5):
    rng = np.random.default_rng(seed)
    return [np.log(rng.dirichlet(np.ones(len(s.values)) * concentration, size=n)) for s in SLOTS]


def brute(logp, i, codes):
    return sum(logp[s][i, codes[:, s]] for s in range(len(SLOTS)))


def test_the_lattice_groups_values_the_rules_cannot_tell_apart():
    lattice = RuleLattice(load_rule_set())
    counts = dict(zip((s.name for s in SLOTS), lattice.class_counts, strict=True))
    # no rule reads experiencer or intensity; realization's can and none are read by no rule
    assert counts["experiencer"] == 1 and counts["intensity"] == 1
    assert counts["realization"] == 5 and counts["time_direction"] == 2
    assert lattice.size == 38_880


@pytest.mark.parametrize("seed", [0, 1])
def test_decode_finds_the_likeliest_routed_explication_and_each_regions_mass(space, seed):
    codes64, codes8 = space
    rule_set = load_rule_set()
    winners, _ = route_codes(codes8, rule_set)
    logp = random_scores(4, seed)
    for i, d in enumerate(decode(logp, lattice=RuleLattice(rule_set))):
        total = brute(logp, i, codes64)
        best_routed = np.max(np.where(winners >= 0, total, -np.inf))
        assert d.logp == pytest.approx(best_routed, abs=1e-4)
        assert d.best_logp == pytest.approx(total.max(), abs=1e-6)
        assert d.label == route(d.values).label != ABSTAIN
        assert d.logp == pytest.approx(
            sum(logp[s][i, SLOTS[s].values.index(d.values[s_.name])] for s, s_ in enumerate(SLOTS)), abs=1e-4
        )
        p = np.exp(total)
        for k, rule in enumerate(rule_set.rules):
            assert d.label_mass[rule.emotion] == pytest.approx(p[winners == k].sum(), abs=1e-6)
        assert d.label_mass[ABSTAIN] == pytest.approx(p[winners < 0].sum(), abs=1e-6)
        assert sum(d.posteriors["agency"].values()) == pytest.approx(1.0)


def test_decoding_follows_the_rule_set_it_is_given(space):
    codes64, codes8 = space
    # a two-rule set: only pride and joy are routable
    rules = {
        "version": "t1",
        "rules": [
            {"emotion": "pride", "conditions": {"evaluation": ["feel-good"], "agency": ["i"]}},
            {"emotion": "joy", "conditions": {"evaluation": ["feel-good"]}},
        ],
    }
    rule_set = parse_rule_set(rules)
    winners, _ = route_codes(codes8, rule_set)
    logp = random_scores(3, 7)
    for i, d in enumerate(decode(logp, lattice=RuleLattice(rule_set))):
        total = brute(logp, i, codes64)
        assert d.logp == pytest.approx(np.max(np.where(winners >= 0, total, -np.inf)), abs=1e-4)
        assert d.label in ("pride", "joy") and d.values["evaluation"] == "feel-good"


def test_a_large_gap_abstains_with_the_best_overall_explication():
    # every slot sure of its default: evaluation=neither is no-emotion... so make evaluation sure
    # of feel-bad and every rule's other slots sure of values no feel-bad rule accepts
    rows = [{s.name: {s.default: 1.0} for s in SLOTS}]
    rows[0]["evaluation"] = {"feel-bad": 0.999, "neither": 0.001}
    logp = as_log_arrays(rows)
    forced = decode(logp)[0]
    assert forced.label == "no-emotion" and not forced.abstained and forced.gap > 5
    kept = decode(logp, abstain_gap=2.0)[0]
    assert kept.abstained and kept.label == ABSTAIN and kept.values["evaluation"] == "feel-bad"
    assert route(kept.values).abstention_type == "no-rule"


def test_a_label_prior_chooses_the_label_and_the_best_explication_inside_its_region(space):
    codes64, codes8 = space
    rule_set = load_rule_set()
    lattice = RuleLattice(rule_set)
    winners, _ = route_codes(codes8, rule_set)
    logp = random_scores(3, 11)
    rng = np.random.default_rng(3)
    prior = np.log(rng.dirichlet(np.ones(len(rule_set.rules)), size=3)) * 2.0
    for i, d in enumerate(decode(logp, lattice=lattice, label_prior=prior)):
        total = brute(logp, i, codes64)
        # each rule's best explication, raised by its prior: the best of those wins
        best = np.array([np.max(np.where(winners == k, total, -np.inf)) for k in range(len(rule_set.rules))])
        k = int(np.argmax(best + prior[i]))
        assert d.label == rule_set.rules[k].emotion == route(d.values).label
        assert d.logp == pytest.approx(best[k], abs=1e-4)
        shares = np.exp(best + prior[i] - np.max(best + prior[i]))
        assert d.confidence == pytest.approx(1 / shares.sum(), rel=1e-4)
    # a prior sure of one label makes every text take it (every rule's region is reachable)
    sure = np.full((3, len(rule_set.rules)), -50.0)
    sure[:, [r.emotion for r in rule_set.rules].index("guilt")] = 0.0
    assert {d.label for d in decode(logp, lattice=lattice, label_prior=sure)} == {"guilt"}
    with pytest.raises(DecodingError, match=r"label_prior: expected shape \(3, 13\)"):
        decode(logp, lattice=lattice, label_prior=prior[:, :4])


def test_an_unsure_label_abstains_with_the_likeliest_explication_no_rule_routes(space):
    codes64, codes8 = space
    winners, _ = route_codes(codes8, load_rule_set())
    logp = random_scores(4, 5)
    free = decode(logp)
    threshold = float(np.median([d.confidence for d in free]))
    for i, (d, kept) in enumerate(zip(free, decode(logp, abstain_below=threshold), strict=True)):
        if d.confidence >= threshold:
            assert kept == d
            continue
        total = brute(logp, i, codes64)
        assert kept.abstained and kept.label == ABSTAIN
        assert route(kept.values).abstention_type == "no-rule"
        assert kept.logp == pytest.approx(np.max(np.where(winners < 0, total, -np.inf)), abs=1e-4)


def test_region_posteriors_are_the_marginals_given_the_label(space):
    codes64, codes8 = space
    rule_set = load_rule_set()
    winners, _ = route_codes(codes8, rule_set)
    logp = random_scores(3, 3)
    labels = ["pride", "fear", "no-emotion"]
    lattice = RuleLattice(rule_set)
    for trust in (1.0, 0.4):
        post = region_posteriors(lattice, logp, labels, trust=trust)
        for i, label in enumerate(labels):
            k = rule_set.emotions.index(label)
            likelihood = np.where(winners == k, trust, (1 - trust) / (len(rule_set.rules) + 1))
            p = np.exp(brute(logp, i, codes64)) * likelihood
            p /= p.sum()
            for s, slot in enumerate(SLOTS):
                expected = np.bincount(codes64[:, s], weights=p, minlength=len(slot.values))
                np.testing.assert_allclose(post[s][i], expected, atol=1e-5)


def test_choose_gap_abstains_only_where_forcing_a_label_is_mostly_wrong():
    gaps = [0.1, 0.2, 0.3, 5.0, 6.0, 7.0]
    # keeps the two right ones, abstains from the four wrong ones
    assert choose_gap(gaps, [True, True, False, False, False, False]) == pytest.approx(0.2)
    assert choose_gap(gaps, [True] * 6) == float("inf")
    with pytest.raises(DecodingError, match="6 gaps but 2 outcomes"):
        choose_gap(gaps, [True, False])


def test_bad_scores_are_refused_naming_the_slot():
    logp = random_scores(2, 0)
    with pytest.raises(DecodingError, match="expected scores for 12 slots"):
        decode(logp[:11])
    bad = list(logp)
    bad[3] = bad[3][:, :2]
    with pytest.raises(DecodingError, match="realization: scores of shape"):
        decode(bad)
    bad = list(logp)
    bad[0] = np.full_like(bad[0], np.nan)
    with pytest.raises(DecodingError, match="experiencer: scores must be log-probabilities"):
        decode(bad)
    with pytest.raises(DecodingError, match="trust must be in"):
        region_posteriors(RuleLattice(), logp, ["joy", "joy"], trust=0)
