"""Raw-annotation export speed (issue 17): every revision of a round of 50,000 items annotated
twice (140,000 revisions), on SQLite, as the worker runs it (read in chunks, routed by the active
rule set, prefill diff, encoded, hashed, written atomically). Target: JSONL and CSV each under
10 s, with memory that does not grow with the round (Python's traced peak after a tenth of the
revisions against the peak at the end)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import figure, run_on_fresh_sqlite

ROOT = Path(__file__).resolve().parent.parent
N_ITEMS = 50_000
MB = 1024 * 1024


def run(quick: bool = False) -> list[dict]:
    n = 5_000 if quick else N_ITEMS
    r = run_on_fresh_sqlite(ROOT / "benchmarks" / "raw_export_db.py", str(n))
    growth = r["peak_at_end"] / r["peak_at_tenth"]
    rows = f"{r['revisions']:,} revisions"
    return [
        figure(f"raw export of {rows} as JSONL (SQLite)", round(r["jsonl_seconds"], 2), "s", "< 10 s",
               r["jsonl_seconds"] < 10),
        figure(f"raw export of {rows} as CSV (SQLite)", round(r["csv_seconds"], 2), "s", "< 10 s",
               r["csv_seconds"] < 10),
        figure("CPU time of the JSONL export", round(r["jsonl_cpu"], 2), "s",
               note="the wall time on a machine nobody else is using; the database's share is in it"),
        figure("CPU time of the CSV export", round(r["csv_cpu"], 2), "s"),
        figure("revisions exported per second (CSV)", round(r["revisions"] / r["csv_seconds"]), "rows/s"),
        figure("traced memory peak after a tenth of the revisions", round(r["peak_at_tenth"] / MB, 1), "MiB"),
        figure("traced memory peak at the end", round(r["peak_at_end"] / MB, 1), "MiB",
               "does not grow with the round (< 1.5x the tenth's)", growth < 1.5),
        figure("CSV file size", round(r["csv_bytes"] / MB, 1), "MiB",
               jsonl=f"{r['jsonl_bytes'] / MB:.1f} MiB of JSONL"),
        figure("setting up the round and its revisions", round(r["setup"], 1), "s"),
    ]  # fmt: skip
