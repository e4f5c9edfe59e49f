"""Gold speed (issue 6): applying an accepted convention that matches 10,000 conflicts, on SQLite
(matching, setting the slot with provenance, routing every settled item, the audit rows, in one
transaction). Target: under 2 s. Also the preview (matching alone) and opening the 10,000 gold
records with their unanimous slots."""

from __future__ import annotations

import statistics
from pathlib import Path

from benchmarks.common import figure, run_on_fresh_sqlite

ROOT = Path(__file__).resolve().parent.parent
N_CONFLICTS = 10_000


def run(quick: bool = False) -> list[dict]:
    n = 2_000 if quick else N_CONFLICTS
    # each run needs a fresh database (applying changes it); the machine is noisy: take the median
    runs = [run_on_fresh_sqlite(ROOT / "benchmarks" / "gold_db.py", str(n)) for _ in range(1 if quick else 3)]
    r = {key: statistics.median(run[key] for run in runs) for key in ("apply", "preview", "sync")}
    r |= {"matched": runs[0]["matched"], "opened": runs[0]["opened"]}
    spread = (
        f"{min(x['apply'] for x in runs):.2f} to {max(x['apply'] for x in runs):.2f} s over {len(runs)} runs"
    )
    return [
        figure(f"apply a convention matching {r['matched']:,} conflicts (SQLite), median",
               round(r["apply"], 3), "s", "< 2 s", r["apply"] < 2.0, spread=spread),
        figure("its preview (matching alone)", round(r["preview"], 3), "s"),
        figure(f"open {r['opened']:,} gold records with their unanimous slots", round(r["sync"], 3), "s"),
    ]  # fmt: skip
