"""Annotator profiles (issue 27): a prefilled round of 5,400 items and ten annotators, two per item
(10,800 annotations, every item with resolved gold, one in five decided by hand), with a blind
round of 540 other items as the control arm, on SQLite. Goal: the list of annotators and one
profile, for the round, render well under a second (target: under 0.5 s). Also every human round,
the API, the CSV and the selectors alone; and the same round with every annotator on every item
(54,000 annotations), no target."""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import figure, runs_on_fresh_sqlite

SCRIPT = Path(__file__).with_name("profiles_db.py")
N_ITEMS = 5_400


def run(quick: bool = False) -> list[dict]:
    n = 540 if quick else N_ITEMS
    loaded, t = runs_on_fresh_sqlite(SCRIPT, ("load", str(n), "2"), ("time",))
    a = loaded["annotations"]
    out = [
        figure(f"profiles list page, one round of {n:,} items, 10 annotators, {a:,} annotations in all",
               round(t["list_page_round"], 3), "s", "< 0.5 s", t["list_page_round"] < 0.5),
        figure("one annotator's profile page, that round (figures, flows, chart, a digest page), median",
               round(t["profile_page_round"], 3), "s", "< 0.5 s", t["profile_page_round"] < 0.5),
        figure("profiles list page, every human round (with the blind control round)",
               round(t["list_page_all"], 3), "s"),
        figure("one profile page, every human round", round(t["profile_page_all"], 3), "s"),
        figure("API list, that round", round(t["api_list_round"], 3), "s"),
        figure("API profile, that round", round(t["api_profile_round"], 3), "s"),
        figure("per-slot CSV, that round", round(t["csv_round"], 3), "s"),
        figure("selectors alone: the list's figures, that round", round(t["selectors_list_round"], 3), "s"),
        figure("selectors alone: one profile, that round", round(t["selectors_profile_round"], 3), "s"),
    ]  # fmt: skip
    if not quick:
        loaded, t = runs_on_fresh_sqlite(SCRIPT, ("load", str(n), "10"), ("time",))
        out += [
            figure(f"profiles list page, every annotator on every item ({loaded['annotations']:,} of them)",
                   round(t["list_page_round"], 3), "s"),
            figure("one profile page, every annotator on every item", round(t["profile_page_round"], 3), "s"),
        ]  # fmt: skip
    return out
