"""The database part of bench_evaluation_view, run in subprocesses on one throwaway SQLite
database: `load N` builds a finished round of N items (two annotators, random legal explications,
random reference labels); `view cold|warm|warm-changed` starts a fresh process as a gunicorn worker would
(with config.warm's start-up work or without it; warm-changed also empties the caches, as a
change of the round's data does) and times its first two Evaluation views. Each prints
one JSON line."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

STARTED = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.test import Client  # noqa: E402

from annotator.models import Item, Round  # noqa: E402
from benchmarks.bulk import finished_round  # noqa: E402
from nsmcore.mapper import load_rule_set  # noqa: E402
from nsmcore.schema import SLOTS, from_codes  # noqa: E402


def load(n: int) -> None:
    rng = np.random.default_rng(0)
    codes = np.stack([rng.integers(0, len(s.values), n) for s in SLOTS], axis=1)
    first = [from_codes(tuple(row)).as_dict() for row in codes.tolist()]
    # the second annotator agrees on most slots: a changed value on one slot in four items
    second = [dict(slots) for slots in first]
    for k in range(0, n, 4):
        slot = SLOTS[k % len(SLOTS)]
        second[k][slot.name] = slot.values[(slot.values.index(first[k][slot.name]) + 1) % len(slot.values)]
    round_ = finished_round(n, lambda p, coder: (first, second)[coder][p])
    emotions = load_rule_set().emotions
    items = list(Item.objects.filter(item_sets=round_.item_set).order_by("pk"))
    for item, label in zip(items, rng.integers(0, len(emotions), n).tolist(), strict=True):
        item.reference_label = emotions[label]
    Item.objects.bulk_update(items, ["reference_label"], batch_size=5000)
    user = User.objects.create_user("adj")
    user.groups.add(Group.objects.get_or_create(name="adjudicator")[0])
    print(json.dumps({"items": n}))


def view(warm: bool, computed: bool) -> None:
    if warm:
        from config.warm import warm_web

        warm_web()
    if not computed:  # as after a change of its data: nothing cached to read
        from django.core.cache import caches

        for alias in caches:
            caches[alias].clear()
    booted = time.perf_counter() - STARTED
    client = Client()
    client.force_login(User.objects.get(username="adj"))
    url = f"/adjudicate/rounds/{Round.objects.get(name='bench').pk}/evaluation/"
    times = []
    for _ in range(2):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200 and b"Headline" in response.content, response.status_code
    print(json.dumps({"boot": booted, "first": times[0], "second": times[1]}))


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(int(sys.argv[2]))
    else:
        view(sys.argv[2].startswith("warm"), computed=sys.argv[2] == "warm")
