"""The pure counting of profiles.figures, on arrays small enough to check by eye."""

from __future__ import annotations

from datetime import date

import numpy as np

from nsmcore.agreement import MISSING
from nsmcore.evaluation_report import Proportion
from profiles import figures


def test_time_summary_leaves_out_unrecorded_times_and_takes_the_nearest_rank_90th_percentile():
    # ten times 1..10 s: median (5 + 6) / 2 = 5.5 s; rank ceil(0.9 * 10) = 9 -> 9 s
    t = figures.time_summary([0, *range(1000, 11000, 1000)])
    assert (t.n, t.median_ms, t.p90_ms, t.median_s) == (10, 5500.0, 9000.0, 5.5)
    assert figures.time_summary([0, 0]) == figures.TimeSummary(0, None, None)


def test_throughput_fills_empty_days_and_turns_to_weeks_over_a_long_span():
    days = figures.throughput({date(2026, 1, 1): 3, date(2026, 1, 3): 1})
    assert [(p.start, p.days, p.items) for p in days] == [
        (date(2026, 1, 1), 1, 3), (date(2026, 1, 2), 1, 0), (date(2026, 1, 3), 1, 1),
    ]  # fmt: skip
    # 2026-01-01 is a Thursday: its week starts on Monday 2025-12-29; 100 days later is in the
    # 15th week from there
    weeks = figures.throughput({date(2026, 1, 1): 2, date(2026, 1, 4): 1, date(2026, 4, 11): 5})
    assert weeks[0] == figures.Period(date(2025, 12, 29), 7, 3)
    assert weeks[-1] == figures.Period(date(2026, 4, 6), 7, 5)
    assert len(weeks) == 15 and sum(p.items for p in weeks) == 8
    assert figures.throughput({}) == []


def test_a_value_outside_the_slot_is_missing_and_counts_nowhere():
    codes = figures.encode([("i", "nothing", "bogus", *["none"] * 9)])
    assert codes[0, 0] == 0 and codes[0, 2] == MISSING
    gold = figures.encode([("i", "none", "i", *["none"] * 9)])
    shares = figures.gold_agreement(codes, gold)
    assert (shares.slots[0].k, shares.slots[0].n) == (1, 1)
    assert (shares.slots[1].k, shares.slots[1].n) == (0, 1)
    assert shares.slots[2].n == 0 and shares.slots[2].value is None


def test_overturned_counts_only_kept_values_that_gold_decided():
    prefill = np.array([[0] * 12, [0] * 12])
    codes = np.array([[0] * 12, [1] + [0] * 11])  # row 2 changed slot 0: not kept
    gold = np.array([[1] + [0] * 11, [MISSING] * 12])  # row 2 has no gold
    over = figures.overturned(codes, prefill, gold)
    assert (over.slots[0].k, over.slots[0].n) == (1, 1)
    assert (over.overall.k, over.overall.n) == (1, 12)


def test_the_difference_is_undefined_without_both_shares():
    assert figures.difference(Proportion.of(3, 4), Proportion.of(1, 4)) == 0.5
    assert figures.difference(Proportion.of(3, 4), Proportion.of(0, 0)) is None
