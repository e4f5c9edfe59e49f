"""The database part of bench_raw_export, run in a subprocess on a throwaway SQLite database:
python benchmarks/raw_export_db.py N. Prints one JSON line of timings and memory.

A round of N items, two annotators who submitted all of them (the thirteen canonical
explications), every fifth annotation saved three times: N * 2.8 revisions. Then the raw export
as the worker runs it (job_run), as JSONL and as CSV, and the CSV again under tracemalloc."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from annotator.models import Annotation, AnnotationRevision  # noqa: E402
from benchmarks.bulk import finished_round  # noqa: E402
from exports import raw_export  # noqa: E402
from exports.models import Export  # noqa: E402
from jobs.models import Job  # noqa: E402
from jobs.services import job_run  # noqa: E402
from nsmcore.regression import canonical_explications  # noqa: E402


def load(n: int):
    explications = [e.as_dict() for e in canonical_explications().values()]
    round_ = finished_round(n, lambda p, k: explications[(p + k) % len(explications)])
    revisions = []
    for annotation in Annotation.objects.order_by("id").iterator(chunk_size=5000):
        slots = annotation.slots()
        for version in range(1, 4 if annotation.pk % 5 == 0 else 2):
            revisions.append(
                AnnotationRevision(
                    annotation_id=annotation.pk, version=version, slots=slots, notes=f"v{version}, \"ok\"",
                    time_spent_ms=1000 * version,
                )
            )  # fmt: skip
    with transaction.atomic():
        AnnotationRevision.objects.bulk_create(revisions, batch_size=5000)
    return round_, len(revisions)


def export(round_, fmt: str) -> tuple[float, float, Export]:
    """Wall and CPU seconds of one export as the worker runs it (the CPU time says what the wall
    time would be on a machine nobody else is using)."""
    job = raw_export.raw_export_start(user=None, round_=round_, format=fmt, enqueue=False)
    start, cpu = time.perf_counter(), time.process_time()
    job_run(job.pk)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert Job.objects.get(pk=job.pk).status == "done"
    return seconds, cpu, Export.objects.get(job=job)


def main() -> None:
    n = int(sys.argv[1])
    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as folder:
        settings.NSM_EXPORT_DIR = Path(folder)
        start = time.perf_counter()
        round_, revisions = load(n)
        setup = time.perf_counter() - start
        jsonl_seconds, jsonl_cpu, jsonl = export(round_, "jsonl")
        csv_seconds, csv_cpu, csv_export = export(round_, "csv")
        assert jsonl.records == csv_export.records == revisions

        # the CSV again under tracemalloc: traced memory after each chunk is encoded
        marks: list[tuple[int, int]] = []
        encode = raw_export.encode_csv

        def traced(rows, **kw):
            text = encode(rows, **kw)
            marks.append(((marks[-1][0] if marks else 0) + len(rows), tracemalloc.get_traced_memory()[1]))
            return text

        raw_export.encode_csv = traced
        Job.objects.all().delete()  # the same job again, not a conflict with the last one
        tracemalloc.start()
        export(round_, "csv")
        tracemalloc.stop()
    tenth = next(m for d, m in marks if d >= revisions // 10)
    print(
        json.dumps(
            {
                "items": n, "revisions": revisions, "setup": setup, "jsonl_seconds": jsonl_seconds,
                "csv_seconds": csv_seconds, "jsonl_cpu": jsonl_cpu, "csv_cpu": csv_cpu,
                "jsonl_bytes": jsonl.bytes, "csv_bytes": csv_export.bytes,
                "peak_at_tenth": tenth, "peak_at_end": marks[-1][1],
            }
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
