"""Gold speed (issue 6): applying an accepted convention that matches 10,000 conflicts, on SQLite
(matching, setting the slot with provenance, routing every settled item, the audit rows, in one
transaction). Target: under 2 s. Also the preview (matching alone) and opening the 10,000 gold
records with their unanimous slots."""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import figure, run_on_fresh_sqlite

ROOT = Path(__file__).resolve().parent.parent
N_CONFLICTS = 10_000


def run(quick: bool = False) -> list[dict]:
    n = 2_000 if quick else N_CONFLICTS
    r = run_on_fresh_sqlite(ROOT / "benchmarks" / "gold_db.py", str(n))
    return [
        figure(f"apply a convention matching {r['matched']:,} conflicts (SQLite)", round(r["apply"], 3), "s",
               "< 2 s", r["apply"] < 2.0),
        figure("its preview (matching alone)", round(r["preview"], 3), "s"),
        figure(f"open {r['opened']:,} gold records with their unanimous slots", round(r["sync"], 3), "s"),
    ]  # fmt: skip
