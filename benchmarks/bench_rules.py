"""Rule revision speed (issue 15): activating a version re-routes every gold construal under it
(one UPDATE per distinct outcome and chunk of ids, a GoldChange per changed label), in one
transaction, on SQLite. Target: 100,000 gold construals in under 10 s. Also rolling back (the same
work the other way) and proposing (the regression suite; no gold in the pilot set here)."""

from __future__ import annotations

import statistics
from pathlib import Path

from benchmarks.common import figure, run_on_fresh_sqlite

ROOT = Path(__file__).resolve().parent.parent
N_CONSTRUALS = 100_000


def run(quick: bool = False) -> list[dict]:
    n = 10_000 if quick else N_CONSTRUALS
    runs = [
        run_on_fresh_sqlite(ROOT / "benchmarks" / "rules_db.py", str(n)) for _ in range(1 if quick else 3)
    ]
    r = {key: statistics.median(run[key] for run in runs) for key in ("activate", "rollback", "propose")}
    first = runs[0]
    times = [x["activate"] for x in runs]
    spread = f"{min(times):.2f} to {max(times):.2f} s over {len(runs)} runs"
    return [
        figure(f"activate: re-route {first['construals']:,} gold construals "
               f"({first['changed']:,} change label), median",
               round(r["activate"], 3), "s", "< 10 s", r["activate"] < 10.0, spread=spread),
        figure("roll back: the same construals under the earlier version", round(r["rollback"], 3), "s",
               "< 10 s", r["rollback"] < 10.0),
        figure("propose: regression suite and pilot comparison", round(r["propose"], 3), "s"),
    ]  # fmt: skip
