"""Each figure of a profile on the team of tests/profiles/conftest.py, with the numbers worked out
by hand from the table there."""

from __future__ import annotations

from datetime import date

import pytest

from adjudication.agreement.analysis import anchoring
from nsmcore.schema import SLOT_NAMES
from profiles.selectors import profile_of, profile_scope, profiles_of

OTHERS = [s for s in SLOT_NAMES if s not in {"agency", "intensity", "evaluation", "trigger"}]


def kn(p) -> tuple[int, int]:
    return p.k, p.n


def by_slot(profile) -> dict:
    return {s.slot: s for s in profile.slots}


def test_the_scope_counts_the_human_rounds_and_names_the_silver_pass_it_leaves_out(team):
    scope = profile_scope()
    assert [r.name for r in scope.rounds] == ["B", "P"]
    assert [r.name for r in scope.silver] == ["S"]
    assert [r.name for r in scope.control_rounds] == ["B"]
    assert scope.parser == "lex"


def test_agreement_with_gold_counts_each_submitted_value_against_construal_one(team, annotator):
    profile = profile_of(user=annotator, scope=profile_scope())
    slots = by_slot(profile)
    # four items of P have gold (B's none; S is a silver pass): t3-0 intensity and t4-0 agency and
    # intensity differ
    assert kn(slots["agency"].gold) == (3, 4)
    assert kn(slots["intensity"].gold) == (2, 4)
    assert all(kn(slots[s].gold) == (4, 4) for s in SLOT_NAMES if s not in {"agency", "intensity"})
    assert kn(profile.overall.gold) == (45, 48)
    assert slots["agency"].gold.value == 0.75
    # exact interval of 3/4, as the paper's table gives such intervals: [0.194, 0.994]
    assert slots["agency"].gold.low == pytest.approx(0.1941, abs=1e-4)
    assert slots["agency"].gold.high == pytest.approx(0.9937, abs=1e-4)
    # 4/4: the lower end is (0.025) ** (1/4) = 0.3976, the upper 1
    assert slots["want"].gold.low == pytest.approx(0.025**0.25, abs=1e-9)
    assert slots["want"].gold.high == 1.0
    assert (profile.submitted, profile.with_gold, profile.with_prefill) == (8, 4, 4)
    assert profile.disagreements == 2  # t3-0 and t4-0


def test_prefilled_values_kept_beside_the_annotators_own_blind_control(team, annotator):
    profile = profile_of(user=annotator, scope=profile_scope())
    slots = by_slot(profile)
    assert kn(slots["agency"].kept) == (2, 4)  # changed on t2-0 and t4-0
    assert kn(slots["intensity"].kept) == (3, 4)  # changed on t4-0
    assert all(kn(slots[s].kept) == (4, 4) for s in SLOT_NAMES if s not in {"agency", "intensity"})
    assert kn(profile.overall.kept) == (45, 48)
    # her blind values of B against lex's PRED: t2-1, t3-1 evaluation; t3-1 agency; t4-1 trigger
    assert profile.control_source == "own" and profile.in_control == 4
    assert kn(slots["evaluation"].control) == (2, 4)
    assert kn(slots["agency"].control) == (3, 4)
    assert kn(slots["trigger"].control) == (3, 4)
    assert all(kn(slots[s].control) == (4, 4) for s in [*OTHERS, "intensity"])
    assert kn(profile.overall.control) == (44, 48)
    # anchoring: kept minus control
    assert slots["agency"].difference == pytest.approx(0.5 - 0.75)
    assert slots["evaluation"].difference == pytest.approx(1.0 - 0.5)
    assert slots["trigger"].difference == pytest.approx(1.0 - 0.75)
    assert slots["intensity"].difference == pytest.approx(0.75 - 1.0)
    assert slots["want"].difference == 0.0
    assert profile.overall.difference == pytest.approx(45 / 48 - 44 / 48)


def test_kept_is_the_anchoring_pages_retention(team, annotator):
    """One definition: the share kept of one round is what adjudication's anchoring page shows."""
    page = {r.annotator: r for r in anchoring(team["P"])}["alice"]
    profile = profile_of(user=annotator, scope=profile_scope(round_=team["P"]))
    assert {s.slot: s.kept.value for s in profile.slots} == page.kept
    assert profile.overall.kept.value == page.overall


def test_without_blind_work_of_their_own_the_control_is_the_teams(team, other_annotator):
    profile = profile_of(user=other_annotator, scope=profile_scope())
    slots = by_slot(profile)
    assert profile.control_source == "team"
    assert kn(profile.overall.control) == (44, 48)  # alice's blind values: the team's only ones
    assert kn(profile.overall.gold) == (48, 48)  # bob agrees with gold everywhere
    assert kn(slots["agency"].kept) == (3, 4) and kn(slots["intensity"].kept) == (3, 4)
    assert kn(profile.overall.kept) == (46, 48)
    assert profile.overall.difference == pytest.approx(46 / 48 - 44 / 48)
    assert kn(profile.overall.overturned) == (0, 46)


def test_a_prefilled_round_alone_has_no_control_when_no_blind_round_shares_its_items(team, annotator):
    scope = profile_scope(round_=team["P"])
    assert scope.control_rounds == ()
    profile = profile_of(user=annotator, scope=scope)
    assert profile.control_source == "" and profile.submitted == 4
    assert profile.overall.control.n == 0 and profile.overall.difference is None
    assert kn(profile.overall.kept) == (45, 48)


def test_kept_values_that_gold_overturned(team, annotator):
    slots = by_slot(profile_of(user=annotator, scope=profile_scope()))
    # intensity kept on t1-0, t2-0, t3-0: gold says very on t3-0
    assert kn(slots["intensity"].overturned) == (1, 3)
    # agency kept on t1-0 and t3-0, where gold keeps i: none overturned; 0/2's upper end is
    # 1 - 0.025 ** (1/2)
    assert kn(slots["agency"].overturned) == (0, 2)
    assert slots["agency"].overturned.high == pytest.approx(1 - 0.025**0.5, abs=1e-9)
    assert kn(profile_of(user=annotator, scope=profile_scope()).overall.overturned) == (1, 45)


def test_flows_against_gold_run_from_the_annotators_value_to_golds(team, annotator):
    flows = profile_of(user=annotator, scope=profile_scope()).flows
    got = [(f.slot, f.a, f.b, f.count, round(f.share_of_a, 4)) for f in flows]
    assert got == [
        ("agency", "someone-else", "i", 1, 0.5),  # she said someone-else on t2-0 and t4-0
        ("intensity", "plain", "very", 1, round(1 / 3, 4)),  # plain on t1-0, t2-0, t3-0
        ("intensity", "very", "plain", 1, 1.0),
    ]


def test_time_per_item_and_throughput(team, annotator):
    profile = profile_of(user=annotator, scope=profile_scope())
    # seven timed (t4-1 recorded none): 10, 20, ... 70 seconds; the median is the 4th, 40 s;
    # the 90th percentile is the value at rank ceil(0.9 * 7) = 7, 70 s
    assert profile.time.n == 7
    assert profile.time.median_ms == 40_000 and profile.time.p90_ms == 70_000
    assert [(p.start, p.days, p.items) for p in profile.throughput] == [
        (date(2026, 3, 2), 1, 2),
        (date(2026, 3, 3), 1, 0),
        (date(2026, 3, 4), 1, 6),
    ]


def test_the_silver_pass_counts_nowhere(team, annotator):
    """Alice answered the silver pass S too, all differently: none of it shows."""
    profile = profile_of(user=annotator, scope=profile_scope())
    assert profile.submitted == 8 and kn(profile.overall.gold) == (45, 48)


def test_the_list_reads_every_annotator_together_with_the_same_figures(team, annotator, other_annotator):
    scope = profile_scope()
    rows = {p.username: p for p in profiles_of(users=[annotator, other_annotator], scope=scope)}
    assert kn(rows["alice"].overall.gold) == (45, 48) and kn(rows["bob"].overall.gold) == (48, 48)
    assert rows["alice"].control_source == "own" and rows["bob"].control_source == "team"
    assert kn(rows["bob"].overall.control) == (44, 48)
    assert rows["alice"].flows == () and rows["alice"].throughput == ()  # headline figures only
