"""Agreement speed (issue 5).

- The dashboard's numbers in nsmcore for 100,000 items x 2 annotators x 12 slots: per-slot raw
  agreement and alpha (krippendorff package) with 1,000-resample bootstrap intervals, conflicts
  and flows. Target: under 1 s.
- The same from the database: a round of 100,000 items with both annotators' work submitted, on
  SQLite, read and analysed cold (no cache).
- Conflict list pages (warm: the analysis cached, as after the first view), through Django's test
  client in-process: p50 and p95 over filtered and paged requests. Target: under 50 ms.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from benchmarks.common import figure, run_on_fresh_sqlite

ROOT = Path(__file__).resolve().parent.parent
N_ITEMS = 100_000


def synthetic_table(n: int, seed: int = 0) -> np.ndarray:
    from nsmcore.schema import SLOTS

    rng = np.random.default_rng(seed)
    table = np.zeros((n, 2, len(SLOTS)), dtype=np.int16)
    for s, slot in enumerate(SLOTS):
        k = len(slot.values)
        table[:, 0, s] = rng.integers(0, k, n)
        table[:, 1, s] = np.where(rng.random(n) < 0.8, table[:, 0, s], rng.integers(0, k, n))
    return table


def bench_library() -> list[dict]:
    from nsmcore.agreement import agreement, conflicts, flows

    table = synthetic_table(N_ITEMS)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        agreement(table, bootstrap=1000, seed=1)
        conflicts(table)
        flows(table[:, 0], table[:, 1])
        times.append(time.perf_counter() - start)
    best = min(times)
    return [
        figure(
            "dashboard numbers in nsmcore, 100,000 items x 2 annotators x 12 slots (1,000 bootstrap)",
            round(best, 3), "s", "< 1 s", best < 1.0,
        )
    ]  # fmt: skip


def bench_database(quick: bool) -> list[dict]:
    n = 20_000 if quick else N_ITEMS
    r = run_on_fresh_sqlite(ROOT / "benchmarks" / "agreement_db.py", str(n))
    return [
        figure(f"round analysis from SQLite, cold, {n:,} items x 2 annotators", round(r["cold"], 3), "s"),
        figure(
            f"conflict list page p50 (warm, {r['conflicts']:,} conflicts)", round(r["p50"] * 1000, 1), "ms"
        ),
        figure("conflict list page p95 (warm)", round(r["p95"] * 1000, 1), "ms", "< 50 ms", r["p95"] < 0.05),
    ]


def run(quick: bool = False) -> list[dict]:
    return bench_library() + bench_database(quick)
