"""The load benchmark's side inside Django (benchmarks/bench_load.py runs it in a subprocess with
the server's environment): the annotators, their sessions and the round before the run, and every
revision stored after it, printed as one JSON line.

    python benchmarks/load_db.py populate USERS PER_USER
    python benchmarks/load_db.py revisions
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import prefilled_item_set, pride_slots, session_for  # noqa: E402

ROUND = "load"


def _django() -> None:
    import django

    django.setup()


def populate(users: int, per_user: int, hooks: int = 0) -> dict[str, Any]:
    """``users`` annotators with ``per_user`` assignments each in one prefilled round, and a
    session for each; with ``hooks``, that many webhooks registered for every event, at an address
    nothing answers (issue 28: a dead endpoint must not slow anyone). Printed as JSON for the client."""
    _django()
    from django.contrib.auth.models import Group, User
    from django.db import transaction

    from annotator.models import Assignment, Item, Round
    from annotator.services import round_create

    per_item = min(2, users)
    n_items = users * per_user // per_item
    with transaction.atomic():
        Item.objects.bulk_create(
            [
                Item(
                    source="load",
                    source_id=str(i),
                    text=f"I was glad when my sister came home (story {i}).",
                    masked_text=f"I was ... when my sister came home (story {i}).",
                    reference_label="joy",
                )
                for i in range(n_items)
            ],
            batch_size=5000,
        )
        item_set = prefilled_item_set("load", pride_slots())
        group = Group.objects.get_or_create(name="annotator")[0]
        people = []
        for n in range(users):
            person = User(username=f"load{n:03d}")
            person.set_unusable_password()  # sessions are made here: no hashing to wait for
            person.save()
            person.groups.add(group)
            people.append(person)
        round_create(
            name=ROUND,
            item_set=item_set,
            annotators=people,
            mode=Round.Mode.PREFILLED,
            prefill_parser="load",
            annotators_per_item=per_item,
        )
    sessions = {person.username: session_for(person) for person in people}
    if hooks:
        from webhooks.services import webhook_create

        for _ in range(hooks):
            webhook_create(user=None, url="http://127.0.0.1:9/hook", events=["*"])
    return {
        "hooks": hooks,
        "sessions": sessions,
        "assignments": Assignment.objects.filter(round__name=ROUND).count(),
        "items": item_set.size,
    }


def revisions() -> list[list[Any]]:
    """Every revision of the round: [assignment id, version, notes]."""
    _django()
    from annotator.models import AnnotationRevision

    rows = AnnotationRevision.objects.filter(annotation__assignment__round__name=ROUND).values_list(
        "annotation__assignment_id", "version", "notes"
    )
    return [list(row) for row in rows]


if __name__ == "__main__":
    if sys.argv[1:2] == ["populate"]:
        print(json.dumps(populate(int(sys.argv[2]), int(sys.argv[3]), int((sys.argv[4:] or ["0"])[0]))))
    elif sys.argv[1:2] == ["revisions"]:
        print(json.dumps(revisions()))
    else:
        sys.exit("usage: load_db.py populate USERS PER_USER | revisions")
