"""Loading a large finished round fast (bulk inserts), for the agreement and gold benchmarks.
Imported only after django.setup()."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.db import transaction

from annotator.models import Annotation, Assignment, Item, ItemSet, ItemSetMember, Round
from nsmcore.schema import SLOT_NAMES


def finished_round(
    n: int,
    slots_for: Callable[[int, int], dict[str, str]],
    *,
    coders: int = 2,
    text_for: Callable[[int], str] = lambda i: f"text {i}",
) -> Round:
    """A blind round of ``n`` new items with ``coders`` annotators whose work is all submitted:
    ``slots_for(position, coder)`` gives each annotation's twelve slots, ``text_for(i)`` each text."""
    with transaction.atomic():
        Item.objects.bulk_create(
            [
                Item(source="bench", source_id=f"b{i}", text=text_for(i), reference_label="joy")
                for i in range(n)
            ],
            batch_size=5000,
        )
        ids = list(Item.objects.filter(source="bench").order_by("id").values_list("id", flat=True))
        item_set = ItemSet.objects.create(name="bench", size=n)
        ItemSetMember.objects.bulk_create(
            [ItemSetMember(item_set=item_set, item_id=i, position=k) for k, i in enumerate(ids)],
            batch_size=5000,
        )
        round_ = Round.objects.create(name="bench", item_set=item_set, mode="blind")
        for coder in range(coders):
            user = User.objects.create_user(f"a{coder}")
            Assignment.objects.bulk_create(
                [
                    Assignment(round=round_, item_id=i, annotator=user, position=p, status="done")
                    for p, i in enumerate(ids)
                ],
                batch_size=5000,
            )
            by_item = dict(
                Assignment.objects.filter(round=round_, annotator=user).values_list("item_id", "id")
            )
            annotations = []
            for p, i in enumerate(ids):
                slots = slots_for(p, coder)
                annotations.append(Annotation(assignment_id=by_item[i], **{s: slots[s] for s in SLOT_NAMES}))
            Annotation.objects.bulk_create(annotations, batch_size=5000)
    return round_
