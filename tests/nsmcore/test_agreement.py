"""Agreement: Krippendorff's alpha against the package and against published worked examples,
the undefined case, bootstrap intervals, conflicts, flows and retention."""

import krippendorff
import numpy as np
import pytest

from nsmcore.agreement import (
    MISSING,
    _coincidences,
    agreement,
    alpha_from_coincidences,
    conflicts,
    encode_rows,
    flows,
    retention,
    slot_agreement,
    value_counts,
)
from nsmcore.schema import SLOT_NAMES, SLOTS
from tests.explications import PRIDE

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: four coders,
# twelve units, values 1..5, missing marked None. Published: nominal 0.743, ordinal 0.815.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
# The same paper's section A: two coders, ten units, binary. Published: 0.095.
K2011_BINARY = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]


def codes(coders_by_unit, offset=0):
    """Coder-major lists -> (items, coders) codes."""
    return np.array([[MISSING if v is None else v - offset for v in coder] for coder in coders_by_unit]).T


def test_published_nominal_and_ordinal_examples():
    data = codes(K2011, offset=1)  # realization has six values: enough for 1..5
    assert slot_agreement(data, "realization").alpha == pytest.approx(0.743, abs=5e-4)
    assert slot_agreement(data, "realization", level="ordinal").alpha == pytest.approx(0.815, abs=5e-4)


def test_published_binary_example():
    result = slot_agreement(codes(K2011_BINARY), "body")
    assert result.alpha == pytest.approx(0.095, abs=5e-4)
    assert result.raw == pytest.approx(0.6)  # 6 of 10 units agree
    assert result.items == 10 and result.pairs == 10


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_matches_the_krippendorff_package_with_missing_values(level, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, size=(300, 3))
    data[rng.random(data.shape) < 0.2] = MISSING
    data[:150, 1] = data[:150, 0]  # some agreement
    reliability = np.where(data < 0, np.nan, data).T.astype(float)
    expected = krippendorff.alpha(
        reliability_data=reliability, level_of_measurement=level, value_domain=[0, 1, 2, 3]
    )
    assert slot_agreement(data, "knowledge", level=level).alpha == pytest.approx(expected, abs=1e-9)
    # the bootstrap's own formula gives the same value on the full data
    counts = value_counts(data, 4)
    counts = counts[counts.sum(axis=1) >= 2]
    mine = alpha_from_coincidences(_coincidences(counts).sum(axis=0), level)
    assert float(mine) == pytest.approx(expected, abs=1e-9)


def test_no_variation_is_undefined_with_the_reason_never_0_or_1():
    data = np.zeros((50, 2), dtype=int)  # everyone says experiencer=i
    result = slot_agreement(data, "experiencer")
    assert result.alpha is None
    assert result.undefined == "no variation: every value is i"
    assert result.raw == 1.0
    assert result.degenerate
    lonely = np.array([[0, MISSING], [MISSING, 1]])
    assert slot_agreement(lonely, "experiencer").undefined == "no item has values from two coders"


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(7)
    data = rng.integers(0, 3, size=(400, 2))
    data[:250, 1] = data[:250, 0]
    a = slot_agreement(data, "experiencer", bootstrap=500, seed=11)
    b = slot_agreement(data, "experiencer", bootstrap=500, seed=11)
    c = slot_agreement(data, "experiencer", bootstrap=500, seed=12)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.ci_low < a.alpha < a.ci_high
    assert a.ci_high - a.ci_low < 0.2


def test_report_means_with_and_without_degenerate_slots():
    rng = np.random.default_rng(3)
    table = np.zeros((200, 2, 12), dtype=int)
    for s, slot in enumerate(SLOTS):
        table[:, 0, s] = rng.integers(0, len(slot.values), 200)
        table[:, 1, s] = np.where(
            rng.random(200) < 0.7, table[:, 0, s], rng.integers(0, len(slot.values), 200)
        )
    table[:, :, 0] = 0  # experiencer: no variation
    report = agreement(table, bootstrap=50)
    assert report.slots[0].alpha is None
    defined = [s.alpha for s in report.slots if s.alpha is not None]
    assert len(defined) == 11
    assert report.mean_alpha == pytest.approx(np.mean(defined))
    assert report.mean_alpha_without_degenerate == pytest.approx(np.mean(defined))
    with pytest.raises(ValueError, match="expected a table of shape"):
        agreement(table[:, :, :5])
    with pytest.raises(ValueError, match="unknown slot"):
        agreement(table, levels={"intensityy": "ordinal"})


def test_conflicts_name_items_and_slots_and_the_median_differing_slots():
    a = PRIDE.slots()
    b = {**a, "agency": "someone-else"}
    c = {**a, "agency": "someone-else", "intensity": "very", "body": "yes"}
    table = np.stack([encode_rows([a, a, a]), encode_rows([a, b, c])], axis=1)
    found = conflicts(table)
    assert found.items == (1, 2)
    assert found.slots == (("agency",), ("agency", "body", "intensity"))
    assert found.disagreeing_pairs == 2
    assert found.median_differing_slots == 2.0
    assert found.per_slot["agency"] == 2 and found.per_slot["trigger"] == 0


def test_flows_count_directional_disagreements():
    parser = encode_rows([{**PRIDE.slots(), "trigger": "something-happened"}] * 3 + [PRIDE.slots()])
    human = encode_rows([PRIDE.slots()] * 4)
    (flow,) = flows(parser, human)
    assert (flow.slot, flow.a, flow.b, flow.count) == (
        "trigger",
        "something-happened",
        "someone-did-something",
        3,
    )
    assert flow.share_of_a == 1.0
    with pytest.raises(ValueError, match="differ in shape"):
        flows(parser, human[:2])


def test_retention_is_the_share_of_values_kept_from_the_prefill():
    prefill = encode_rows([PRIDE.slots()] * 4)
    submitted = encode_rows([PRIDE.slots()] * 3 + [{**PRIDE.slots(), "agency": "none"}])
    kept = retention(submitted, prefill)
    assert kept["agency"] == 0.75 and kept["trigger"] == 1.0
    assert retention(submitted, encode_rows([None] * 4))["agency"] is None


def test_variance_degenerate_is_a_slot_whose_alpha_turns_on_a_handful_of_values():
    # issue 26, as on silver-156: EXPERIENCER has one stray value in 312 (alpha 0), BODY six values
    # other than "no" that both coders agree on (alpha 1.0). Both have one value over 95%; the
    # paper leaves out only the variance-degenerate EXPERIENCER, and so does the mean here.
    rng = np.random.default_rng(5)
    table = np.zeros((156, 2, 12), dtype=int)
    for s, slot in enumerate(SLOTS):
        table[:, 0, s] = rng.integers(0, len(slot.values), 156)
        table[:, 1, s] = np.where(
            rng.random(156) < 0.8, table[:, 0, s], rng.integers(0, len(slot.values), 156)
        )
    experiencer, body = SLOT_NAMES.index("experiencer"), SLOT_NAMES.index("body")
    table[:, :, experiencer] = 0
    table[7, 1, experiencer] = 1
    table[:, :, body] = 0
    table[[3, 40, 90], :, body] = 1
    report = agreement(table, bootstrap=0)
    by_slot = {s.slot: s for s in report.slots}
    assert (by_slot["experiencer"].alpha, by_slot["experiencer"].minority) == (0.0, 1)
    assert (by_slot["body"].alpha, by_slot["body"].minority) == (1.0, 6)
    assert by_slot["body"].majority_share > 0.95
    assert report.degenerate_slots == ("experiencer",)
    kept = [s.alpha for s in report.slots if s.slot != "experiencer"]
    assert report.mean_alpha_without_degenerate == pytest.approx(np.mean(kept))
    assert report.as_dict()["degenerate_slots"] == ["experiencer"]
