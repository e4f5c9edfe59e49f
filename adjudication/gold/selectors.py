"""Reads of gold for the pages: what a GET may know without writing.

The pages used to call ``gold_sync`` on every view, so that a GET opened gold records. They now
only say how many records are waiting to be opened (``gold_awaiting``) and offer a button that
POSTs; ``gold_sync`` itself stays the one writer (the button, the commands, the jobs)."""

from __future__ import annotations

from django.db.models import Q

from adjudication.agreement.analysis import round_analysis
from adjudication.models import GoldItem
from annotator.models import Assignment, Round


def gold_awaiting(round_: Round) -> int:
    """How many items ``gold_sync`` would open now: every slot given by at least two annotators,
    no assignment of the item still pending, and no gold record yet (the same test as
    ``gold_sync``, read only)."""
    data = round_analysis(round_).data
    if not data.coders:
        return 0
    present = data.table >= 0
    enough = present.sum(axis=1).min(axis=1) >= 2
    ready = set(data.item_ids[enough].tolist())
    if not ready:
        return 0
    # subqueries, not lists of ids: a round of 100,000 items would pass SQLite's variable limit
    assigned = Assignment.objects.filter(round=round_)
    pending = assigned.filter(status=Assignment.Status.PENDING).values_list("item_id", flat=True)
    have = GoldItem.objects.filter(item_id__in=assigned.values("item_id")).values_list("item_id", flat=True)
    return len(ready - set(pending) - set(have))


def gold_next_open(round_: Round, *, after: str) -> int | None:
    """The item id of the round's next record that needs deciding (open, or marked for review),
    in the list's order (source id) after ``after``, wrapping round to the first; None when none
    is left."""
    waiting = (
        GoldItem.objects.filter(round=round_)
        .filter(Q(status=GoldItem.Status.OPEN) | Q(needs_review=True))
        .exclude(item__source_id=after)
        .order_by("item__source_id")
    )
    following = waiting.filter(item__source_id__gt=after).values_list("item_id", flat=True).first()
    return following if following is not None else waiting.values_list("item_id", flat=True).first()
