"""Runs inside Django against DATABASE_URL for bench_workspace: `import` or `populate`.

    DATABASE_URL=... python benchmarks/workspace_worker.py import CROWD_DIR
    DATABASE_URL=... python benchmarks/workspace_worker.py populate N_ITEMS N_ANNOTATORS

Prints one JSON object on stdout.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from annotator.imports import items_import  # noqa: E402
from annotator.models import Assignment, Item, Round  # noqa: E402
from annotator.services import round_create  # noqa: E402
from benchmarks.common import prefilled_item_set, pride_slots, session_for  # noqa: E402

SPLITS = ("train", "val", "test")
PRED = pride_slots()


def bench_import(crowd: Path, repeat: int = 5) -> dict:
    files = [(crowd / f"crowd-enVent-{s}.tsv").read_bytes() for s in SPLITS]
    times = []
    rows = 0
    for _ in range(repeat):
        Item.objects.filter(source="bench-import").delete()
        start = time.perf_counter()
        rows = sum(items_import(data=data, fmt="tsv", source="bench-import").created for data in files)
        times.append(time.perf_counter() - start)
    reimport_start = time.perf_counter()
    unchanged = sum(items_import(data=data, fmt="tsv", source="bench-import").unchanged for data in files)
    reimport = time.perf_counter() - reimport_start
    Item.objects.filter(source="bench-import").delete()
    return {
        "rows": rows,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "reimport_s": reimport,
        "reimport_unchanged": unchanged,
        "vendor": connection.vendor,
    }


def populate(n_items: int, n_annotators: int, queue: bool = False) -> dict:
    """n_items items with predictions, one prefilled round over all of them, two annotators per
    item among n_annotators; a logged-in session for the first annotator. With ``queue``, the
    round is served by a mixed learning queue, computed here (its time is reported)."""
    start = time.perf_counter()
    texts = [
        "I was ... when my sister came home.",
        "I felt ... when the bus was late again.",
        "I was ... that I passed the exam.",
        "I felt ... when my dog was ill.",
    ]
    labels = ["joy", "anger", "pride", "sadness", "fear", "trust", "relief", "surprise"]
    with transaction.atomic():
        Item.objects.bulk_create(
            [
                Item(
                    source="bench",
                    source_id=str(i),
                    text=texts[i % 4].replace("...", "glad"),
                    masked_text=texts[i % 4],
                    reference_label=labels[i % 8],
                )
                for i in range(n_items)
            ],
            batch_size=5000,
        )
        item_set = prefilled_item_set("bench", PRED)
        group = Group.objects.get_or_create(name="annotator")[0]
        users = []
        for a in range(n_annotators):
            user = User.objects.create_user(f"bench{a:02d}", password="bench")
            user.groups.add(group)
            users.append(user)
        round_ = round_create(
            name="bench",
            item_set=item_set,
            annotators=users,
            mode=Round.Mode.PREFILLED,
            prefill_parser="bench",
        )
    queued: dict = {}
    if queue:
        from learning.services import queue_compute, queue_policy_set

        started = time.perf_counter()
        result = queue_compute(policy=queue_policy_set(round_=round_, user=None, order="mixed"))
        queued = {"queue_s": time.perf_counter() - started, "queue_moved": result.reordered}
    session_key = session_for(users[0])
    pending = list(
        Assignment.objects.filter(round=round_, annotator=users[0])
        .order_by("position")
        .values_list("id", flat=True)
    )
    return {
        "seconds": time.perf_counter() - start,
        "items": item_set.size,
        "assignments": Assignment.objects.filter(round=round_).count(),
        "annotators": n_annotators,
        "session": session_key,
        "assignment_ids": pending[:2000],
        "vendor": connection.vendor,
        **queued,
    }


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "import":
        print(json.dumps(bench_import(Path(sys.argv[2]))))
    elif command == "populate":
        print(json.dumps(populate(int(sys.argv[2]), int(sys.argv[3]), queue=sys.argv[4:] == ["queue"])))
    else:
        sys.exit(f"unknown command {command!r}")
