"""The database part of bench_export, run in a subprocess on a throwaway SQLite database:
python benchmarks/export_db.py N. Prints one JSON line of timings and memory.

N gold items (unanimous dual annotations of the thirteen canonical explications, on distinct
texts), every line's verification cached under a tiny NLI model built here (as a verification
job would leave it), then the export as the worker runs it: the whole gold corpus, verified."""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from django.core.cache import caches  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from adjudication.gold.services import gold_sync  # noqa: E402
from annotator.models import Item  # noqa: E402
from benchmarks.bench_parsers import crowd_texts  # noqa: E402
from benchmarks.bulk import finished_round  # noqa: E402
from exports.export import export_prepare, export_write  # noqa: E402
from nsmcore.regression import canonical_explications  # noqa: E402
from nsmcore.render import render  # noqa: E402
from nsmcore.tiny import build_tiny_nli  # noqa: E402
from nsmcore.verifier import Verifier, text_key  # noqa: E402
from verification.models import LineVerification  # noqa: E402


def load(n: int, model: str) -> int:
    texts, _ = crowd_texts()
    explications = [e.as_dict() for e in canonical_explications().values()]
    round_ = finished_round(
        n,
        lambda p, k: explications[p % len(explications)],
        text_for=lambda i: f"{texts[i % len(texts)]} [{i}]",
    )
    opened = gold_sync(round_)
    rng = random.Random(7)
    rows = []
    lines = [[line.text for line in render(canonical_explications()[e])] for e in canonical_explications()]
    for position, (text,) in enumerate(Item.objects.order_by("id").values_list("text")):
        sha = text_key(text)
        for line in lines[position % len(lines)]:
            p = rng.random()
            rows.append((model, sha, line, p, (1 - p) / 2, (1 - p) / 2))
    table = LineVerification._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} "
            "(model, text_sha, line, p_entailment, p_neutral, p_contradiction, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, CURRENT_TIMESTAMP)",
            rows,
        )
    return opened


def main() -> None:
    n = int(sys.argv[1])
    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as folder:
        build_tiny_nli(Path(folder) / "nli")
        verifier = Verifier(str(Path(folder) / "nli"), device="cpu")
        start = time.perf_counter()
        opened = load(n, verifier.cache_model)
        setup = time.perf_counter() - start
        cached = LineVerification.objects.count()

        out = Path(folder) / "exports"
        # the first export reads the per-line cache and keeps each construal's verified lines
        start = time.perf_counter()
        export_prepare(None)  # the job's writes before the archive: timed with it, as the job runs them
        first_path, _ = export_write(round_=None, verifier=verifier, folder=out, tag="bench-1")
        first = time.perf_counter() - start
        first_bytes = first_path.read_bytes()
        first_path.unlink()
        # a fresh worker process: nothing kept in its own memory from the first run
        caches["analysis"].clear()
        start = time.perf_counter()
        export_prepare(None)
        path, manifest = export_write(round_=None, verifier=verifier, folder=out, tag="bench")
        seconds = time.perf_counter() - start
        assert path.read_bytes() == first_bytes, "the same database gives the same bytes"
        assert manifest["counts"]["items"] == n and LineVerification.objects.count() == cached, "all cached"
        size = path.stat().st_size
        jsonl = manifest["files"]["emoexpl.jsonl"]["bytes"]

        # the same export again under tracemalloc: traced memory after each batch
        marks: list[tuple[int, int]] = []
        done = [0]

        def progress(k: int) -> None:
            done[0] += k
            marks.append((done[0], tracemalloc.get_traced_memory()[1]))

        tracemalloc.start()
        export_write(round_=None, verifier=verifier, folder=out, tag="bench-mem", progress=progress)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    tenth = next(m for d, m in marks if d >= n // 10)
    print(
        json.dumps(
            {
                "items": n, "opened": opened, "setup": setup, "cached_lines": cached, "seconds": seconds,
                "first": first,
                "archive_bytes": size, "jsonl_bytes": jsonl, "lines": manifest["counts"]["lines"],
                "peak_at_tenth": tenth, "peak_at_end": marks[-1][1], "peak_overall": peak,
            }
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
