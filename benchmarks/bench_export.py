"""Export speed (issue 7): the EmoExpl export of 100,000 gold items whose lines' verification is
cached, on SQLite, as the worker runs it (records, verification lookups, manifest with agreement,
dataset card, deterministic zip). Target: under 10 s, with memory that does not grow with the
corpus (Python's traced peak after a tenth of the items against the peak at the end)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import figure, run_on_fresh_sqlite

ROOT = Path(__file__).resolve().parent.parent
N_ITEMS = 100_000
MB = 1024 * 1024


def run(quick: bool = False) -> list[dict]:
    n = 10_000 if quick else N_ITEMS
    r = run_on_fresh_sqlite(ROOT / "benchmarks" / "export_db.py", str(n))
    growth = r["peak_at_end"] / r["peak_at_tenth"]
    return [
        figure(f"export {r['items']:,} gold items, {r['lines']:,} lines, cached verification (SQLite)",
               round(r["seconds"], 2), "s", "< 10 s", r["seconds"] < 10),
        figure("items exported per second", round(r["items"] / r["seconds"]), "items/s"),
        figure("the first export after verification (from the per-line cache)", round(r["first"], 2), "s",
               note="it keeps each construal's verified lines, which later exports read"),
        figure("traced memory peak after a tenth of the items", round(r["peak_at_tenth"] / MB, 1), "MiB"),
        figure("traced memory peak at the end", round(r["peak_at_end"] / MB, 1), "MiB",
               "does not grow with the corpus (< 1.5x the tenth's)", growth < 1.5),
        figure("archive size (zip)", round(r["archive_bytes"] / MB, 1), "MiB",
               jsonl=f"{r['jsonl_bytes'] / MB:.1f} MiB of JSONL"),
        figure("setting up the corpus and its per-line verification cache", round(r["setup"], 1), "s"),
    ]  # fmt: skip
