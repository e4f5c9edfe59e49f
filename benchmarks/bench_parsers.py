"""Parser speed (issue 4).

- The lexical baseline over the 5,400 crowd-enVent texts (generated_text): items per second, in
  one process, no database.
- The transformers backend on a tiny random Llama built here (no download): batched (16 texts per
  batch, two forward passes per slot over the cached shared prefix) against one candidate per
  forward pass; items per second of each, the ratio, and forward passes per item.
  The tiny model makes compute cheap, so the ratio measures what batching saves in per-call
  overhead; on a real model the saving is larger still.
- A prefill job end to end on SQLite (parse + write predictions + progress), run inline over the
  same 5,400 texts: items per second.

Without the shared crowd-enVent copy, the project's own fixture texts are repeated to 5,400 and
the figures say so.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import figure, timed

ROOT = Path(__file__).resolve().parent.parent
CROWD = ROOT.parent / "shared" / "data" / "crowd-enVent"
N_TEXTS = 5400


def crowd_texts() -> tuple[list[str], str]:
    files = sorted(CROWD.glob("crowd-enVent-*.tsv"))
    texts: list[str] = []
    for path in files:
        with path.open(newline="", encoding="utf-8") as stream:
            texts += [row["generated_text"] for row in csv.DictReader(stream, delimiter="\t")]
    if texts:
        return texts[:N_TEXTS], f"crowd-enVent ({len(texts)} texts)"
    fixture = [json.loads(line)["text"] for line in (ROOT / "fixtures" / "demo_items.jsonl").open()]
    return (fixture * (N_TEXTS // len(fixture) + 1))[
        :N_TEXTS
    ], "fixture texts repeated (crowd-enVent not found)"


def bench_lexical(texts: list[str]) -> list[dict]:
    from nsmcore.parsers import LexicalParser

    parser = LexicalParser()
    seconds, results = timed(lambda: parser.parse(texts), repeat=3)
    legal = sum(r.legal for r in results)
    return [
        figure(f"lexical parser over {len(texts):,} texts", round(len(texts) / seconds), "items/s"),
        figure("lexical parser: share legal", round(legal / len(texts), 4), "share"),
    ]


def bench_transformers(texts: list[str], quick: bool) -> list[dict]:
    from nsmcore.parsers.transformers_lm import TransformersParser
    from nsmcore.tiny import build_tiny_causal_lm

    sample = texts[: 16 if quick else 48]
    with tempfile.TemporaryDirectory() as folder:
        build_tiny_causal_lm(folder, seed=0, hidden_size=64, layers=2)
        batched = TransformersParser(folder, device="cpu", batch_size=16, max_rows=2048)
        single = TransformersParser(folder, device="cpu", batch_size=1, max_rows=1, strategy="naive")
        batched.parse(sample[:2])  # warm up both (prefix cache, allocator)
        single.parse(sample[:1])
        b0, s0 = batched.forward_passes, single.forward_passes
        start = time.perf_counter()
        out_b = batched.parse(sample)
        t_batched = time.perf_counter() - start
        start = time.perf_counter()
        out_s = single.parse(sample)
        t_single = time.perf_counter() - start
    same = sum(a.explication == b.explication for a, b in zip(out_b, out_s, strict=True))
    n = len(sample)
    return [
        figure(
            f"transformers tiny Llama, batched (16 per batch), {n} texts", round(n / t_batched, 2), "items/s"
        ),
        figure("transformers tiny Llama, one candidate per forward pass", round(n / t_single, 2), "items/s"),
        figure("transformers batched / one-at-a-time", round(t_single / t_batched, 1), "x"),
        figure(
            "forward passes per item, batched", round((batched.forward_passes - b0) / n, 3), "passes/item"
        ),
        figure(
            "forward passes per item, one at a time",
            round((single.forward_passes - s0) / n, 3),
            "passes/item",
        ),
        figure("batched and one-at-a-time choose the same explication", same / n, "share"),
    ]


JOB_SCRIPT = """
import json, sys, time, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from annotator.imports import items_import
from annotator.models import Item
from annotator.sampling import item_set_from_items
from predictions.prefill import job_prefill_start
from jobs.services import job_run
from jobs.models import Job
texts = json.load(open(sys.argv[1]))
items_import(data="\\n".join(json.dumps({"text_id": f"b{i}", "emotion": "joy", "text": t})
             for i, t in enumerate(texts)), fmt="jsonl", source="bench")
item_set = item_set_from_items(name="bench", items=list(Item.objects.filter(source="bench")))
job = job_prefill_start(user=None, item_set=item_set, enqueue=False)
start = time.perf_counter()
job_run(job.pk)
seconds = time.perf_counter() - start
job.refresh_from_db()
assert job.status == "done" and job.done == len(texts), (job.status, job.error)
print(json.dumps({"seconds": seconds, "items": job.done}))
"""


def bench_job(texts: list[str]) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "texts.json"
        data.write_text(json.dumps(texts))
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.dev",
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "NSM_BROKER_DIR": f"{folder}/broker",
            "NSM_CACHE_URL": f"file://{folder}/cache",
            "PYTHONPATH": str(ROOT),
        }
        out = subprocess.run(
            [sys.executable, "-c", JOB_SCRIPT, str(data)], cwd=ROOT, env=env, capture_output=True, text=True
        )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return [
        figure(
            f"prefill job end to end on SQLite, lexical, {result['items']:,} items",
            round(result["items"] / result["seconds"]),
            "items/s",
        )
    ]


def run(quick: bool = False) -> list[dict]:
    texts, source = crowd_texts()
    figures = bench_lexical(texts)
    figures += bench_transformers(texts, quick)
    figures += bench_job(texts)
    for f in figures:
        f["texts"] = source
    return figures
