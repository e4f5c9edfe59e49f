"""The database part of bench_profiles, run in subprocesses on one throwaway SQLite database:
`load N K` builds a prefilled round of N items for ten annotators, K per item, every annotation
submitted (the prefill kept on most slots, a time, a first revision on one of 20 days), the items'
gold resolved (a few slots by hand, with the audit rows), the parser's predictions, and a blind
round of N/10 other items (the control arm); `time` times the pages, the API and the selectors in
a fresh process, each the median of five after one warm-up. Each prints one JSON line."""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402

from adjudication.models import GoldChange, GoldConstrual, GoldItem  # noqa: E402
from annotator.models import (  # noqa: E402
    Annotation,
    AnnotationRevision,
    Assignment,
    Item,
    ItemSet,
    ItemSetMember,
    ParserPrediction,
    Round,
)
from benchmarks.common import pride_slots  # noqa: E402
from nsmcore.schema import SLOT_NAMES, SLOTS  # noqa: E402

ANNOTATORS = 10
DONE = "done"
DAY0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _round(name: str, ids: list[int], mode: str, users: list[User], k: int, rng, pred: dict) -> Round:
    item_set = ItemSet.objects.create(name=name, size=len(ids))
    ItemSetMember.objects.bulk_create(
        [ItemSetMember(item_set=item_set, item_id=i, position=p) for p, i in enumerate(ids)], batch_size=5000
    )
    round_ = Round.objects.create(
        name=name, item_set=item_set, mode=mode, prefill_parser="bench" if mode == "prefilled" else ""
    )
    assignments = [
        Assignment(
            round=round_, item_id=i, annotator=users[(p * k + j) % len(users)], position=p, status="done"
        )
        for p, i in enumerate(ids)
        for j in range(k)
    ]
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    made = list(Assignment.objects.filter(round=round_).values_list("pk", "item_id", "annotator_id"))
    annotations = []
    for pk, _item, _user in made:
        slots = dict(pred)
        for s in np.nonzero(rng.random(len(SLOTS)) < 0.08)[0]:  # a changed value on about 1 slot in 12
            slot = SLOTS[s]
            slots[slot.name] = slot.values[(slot.values.index(slots[slot.name]) + 1) % len(slot.values)]
        prefilled = mode == "prefilled"
        annotations.append(Annotation(
            assignment_id=pk, **slots, prefill=pred if prefilled else None,
            kept_prefill=[n for n in SLOT_NAMES if slots[n] == pred[n]] if prefilled else [],
            time_spent_ms=int(rng.integers(5_000, 120_000)),
        ))  # fmt: skip
    Annotation.objects.bulk_create(annotations, batch_size=2000)
    ids_of = dict(Annotation.objects.filter(assignment__round=round_).values_list("assignment_id", "pk"))
    AnnotationRevision.objects.bulk_create(
        [
            AnnotationRevision(
                annotation_id=ids_of[pk], version=1, slots={}, created_by_id=user,
                created_at=DAY0 + timedelta(days=int(rng.integers(0, 20)), minutes=int(rng.integers(0, 600))),
            )
            for pk, _item, user in made
        ],
        batch_size=5000,
    )  # fmt: skip
    return round_


def load(n: int, k: int) -> None:
    rng = np.random.default_rng(0)
    pred = pride_slots()
    with transaction.atomic():
        users = [User.objects.create_user(f"annotator{a}") for a in range(ANNOTATORS)]
        group = Group.objects.get_or_create(name="annotator")[0]
        for user in users:
            user.groups.add(group)
        adjudicator = User.objects.create_user("adj")
        adjudicator.groups.add(Group.objects.get_or_create(name="adjudicator")[0])
        control = n // 10
        items = [
            Item(source="bench", source_id=f"b{i}", text=f"t{i}", reference_label="pride")
            for i in range(n + control)
        ]
        Item.objects.bulk_create(items, batch_size=5000)
        ids = list(Item.objects.filter(source="bench").order_by("pk").values_list("pk", flat=True))
        predictions = [ParserPrediction(item_id=i, parser="bench", explication=pred, legal=True) for i in ids]
        ParserPrediction.objects.bulk_create(predictions, batch_size=5000)
        treated = _round("P", ids[:n], "prefilled", users, k, rng, pred)
        _round("B", ids[n:], "blind", users, 2, rng, pred)
        GoldItem.objects.bulk_create(
            [GoldItem(item_id=i, round=treated, status="resolved") for i in ids[:n]], batch_size=5000
        )
        golds = dict(GoldItem.objects.filter(round=treated).values_list("item_id", "pk"))
        construals, changes = [], []
        for p, i in enumerate(ids[:n]):
            slots = dict(pred)
            provenance = {name: {"source": "unanimous"} for name in SLOT_NAMES}
            if p % 5 == 0:  # one item in five: agency decided by hand
                slots["agency"] = "someone-else"
                provenance["agency"] = {"source": "adjudicated", "by": "adj"}
                after = {"slots": slots, "second": None}
                why = "another person acts"
                changes.append(
                    GoldChange(
                        gold_id=golds[i], who=adjudicator, before={"slots": pred}, after=after, why=why
                    )
                )
            construals.append(GoldConstrual(gold_id=golds[i], index=1, slots=slots, provenance=provenance))
        GoldConstrual.objects.bulk_create(construals, batch_size=5000)
        GoldChange.objects.bulk_create(changes, batch_size=5000)
    print(json.dumps({"items": n, "annotations": Annotation.objects.count()}))


def _median(fn, repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timings() -> None:
    from profiles.selectors import profile_of, profile_scope, profile_users, profiles_of

    treated = Round.objects.get(name="P")
    client = Client()
    client.force_login(User.objects.get(username="adj"))

    def get(url: str, **params) -> None:
        response = client.get(url, params)
        assert response.status_code == 200, (url, response.status_code)

    viewer = User.objects.get(username="adj")
    subject = User.objects.get(username="annotator3")
    doc = {
        "list_page_round": _median(lambda: get("/profiles/", round=treated.pk)),
        "list_page_all": _median(lambda: get("/profiles/")),
        "profile_page_round": _median(lambda: get("/profiles/annotator3/", round=treated.pk)),
        "profile_page_all": _median(lambda: get("/profiles/annotator3/")),
        "api_list_round": _median(lambda: get("/api/profiles/", round=treated.pk)),
        "api_profile_round": _median(lambda: get("/api/profiles/annotator3/", round=treated.pk)),
        "csv_round": _median(lambda: get("/profiles/annotator3/slots.csv", round=treated.pk)),
        "selectors_list_round": _median(
            lambda: profiles_of(
                users=profile_users(viewer=viewer, scope=(s := profile_scope(round_=treated))), scope=s
            )
        ),
        "selectors_profile_round": _median(
            lambda: profile_of(user=subject, scope=profile_scope(round_=treated))
        ),
    }
    print(json.dumps(doc))


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(int(sys.argv[2]), int(sys.argv[3]))
    else:
        timings()
