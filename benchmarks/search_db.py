"""The database part of bench_search, run in a subprocess on a migrated database (DATABASE_URL):
python benchmarks/search_db.py N_ITEMS N_SEARCHES TSV... Prints one JSON line of timings.

N_ITEMS items are made from the crowd-enVent texts (repeated, each with its own id); each search
is one to three words drawn from the texts, and is timed as the gold list and the item set page
run it: the count of matches and the first page of 50 in id order."""

from __future__ import annotations

import csv
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from django.db import connection  # noqa: E402
from django.db.models import Q  # noqa: E402

from annotator.models import Item  # noqa: E402
from annotator.search import items_searched, search_terms  # noqa: E402

PAGE = 50


def texts(paths: list[str]) -> list[tuple[str, str]]:
    rows = []
    for path in paths:
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                rows.append((row["generated_text"], row["hidden_emo_text"]))
    return rows


def load(n: int, rows: list[tuple[str, str]]) -> None:
    batch = []
    for k in range(n):
        text, masked = rows[k % len(rows)]
        batch.append(
            Item(source="bench", source_id=f"b{k}", text=text, masked_text=masked, reference_label="joy")
        )
        if len(batch) == 5_000:
            Item.objects.bulk_create(batch)
            batch = []
    Item.objects.bulk_create(batch)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotator_item")


def page_of(queryset) -> tuple[int, list[str]]:
    return queryset.count(), list(queryset.order_by("source_id").values_list("source_id", flat=True)[:PAGE])


def contains(q: str):
    match = Q()
    for term in search_terms(q):
        match &= Q(source_id__icontains=term) | Q(text__icontains=term) | Q(masked_text__icontains=term)
    return Item.objects.filter(match)


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]


def main() -> None:
    n, searches, paths = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    rows = texts(paths)
    load(n, rows)
    rng = random.Random(7)
    vocabulary = [w for text, _ in rows for w in search_terms(text) if len(w) > 2]
    queries = [" ".join(rng.sample(vocabulary, rng.choice((1, 2, 3)))) for _ in range(searches)]
    # a word and its start ("frustr"), as people type
    queries = [q if k % 4 else q[: max(3, len(q) * 2 // 3)] for k, q in enumerate(queries)]
    timings, hits = [], []
    for q in queries:
        start = time.perf_counter()
        count, _ = page_of(items_searched(Item.objects.all(), q))
        timings.append(time.perf_counter() - start)
        hits.append(count)
    baseline = []
    for q in queries[:20]:  # the scan reads every row: a few searches say enough
        start = time.perf_counter()
        page_of(contains(q))
        baseline.append(time.perf_counter() - start)
    # the same answers both ways (on the searches whose words are whole words of the texts)
    check = queries[1]
    assert page_of(items_searched(Item.objects.all(), check))[0] <= page_of(contains(check))[0]
    print(json.dumps({
        "items": n, "searches": len(queries), "p95": p95(timings), "median": statistics.median(timings),
        "baseline_p95": p95(baseline), "median_hits": statistics.median(hits), "vendor": connection.vendor,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
