"""The database half of bench_agreement, run in a subprocess on a throwaway SQLite database:
python benchmarks/agreement_db.py N_ITEMS. Prints one JSON line of timings."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.cache import caches  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from adjudication.agreement.analysis import round_analysis  # noqa: E402
from annotator.models import Round  # noqa: E402
from benchmarks.bench_agreement import synthetic_table  # noqa: E402
from benchmarks.bulk import finished_round  # noqa: E402
from nsmcore.schema import SLOTS  # noqa: E402


def load(n: int) -> Round:
    table = synthetic_table(n)
    return finished_round(
        n, lambda p, k: {slot.name: slot.values[table[p, k, s]] for s, slot in enumerate(SLOTS)}
    )


def main() -> None:
    n = int(sys.argv[1])
    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    round_ = load(n)
    loaded = time.perf_counter() - start
    adjudicator = User.objects.create_user("adj", password="x")
    adjudicator.groups.add(Group.objects.get_or_create(name="adjudicator")[0])

    for alias in caches:
        caches[alias].clear()
    start = time.perf_counter()
    analysis = round_analysis(round_)
    cold = time.perf_counter() - start

    client = Client()
    client.force_login(adjudicator)
    url = f"/adjudicate/rounds/{round_.pk}/conflicts/"
    queries = [
        {},
        {"page": 7},
        {"slot": "agency"},
        {"slot": "trigger", "a": "none", "b": "nothing"},
        {"slot": "knowledge", "page": 40},
        {"page": 900},
    ]
    client.get(url)  # the analysis is in its cache from the first view on
    times = []
    for _ in range(20):
        for query in queries:
            t = time.perf_counter()
            response = client.get(url, query)
            times.append(time.perf_counter() - t)
            assert response.status_code == 200, response.status_code
    times.sort()
    doc = {
        "load": loaded,
        "cold": cold,
        "p50": times[len(times) // 2],
        "p95": times[int(len(times) * 0.95)],
        "conflicts": len(analysis.conflicts),
    }
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
