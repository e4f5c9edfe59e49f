"""Reads of gold for the pages: what a GET may know without writing.

The pages used to call ``gold_sync`` on every view, so that a GET opened gold records. They now
only say how many records are waiting to be opened (``gold_awaiting``) and offer a button that
POSTs; ``gold_sync`` itself stays the one writer (the button, the commands, the jobs)."""

from __future__ import annotations

from adjudication.analytics import round_analysis
from adjudication.gold import Match, _matching_rows, _open_construals
from adjudication.models import GoldItem
from annotator.models import Assignment, Item, Round
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES


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


def convention_open_matches(convention) -> list[Match]:
    """The open gold records this convention would settle, as ``convention_matches`` finds them
    but without opening records first (that is a write; the page offers it as a button)."""
    analysis, rows = _matching_rows(convention)
    data = analysis.data
    row_of = {int(data.item_ids[r]): int(r) for r in rows}
    open_slot = {
        item_id: gold_id
        for gold_id, item_id, slots in _open_construals(convention.round, "gold_id", "gold__item_id", "slots")
        if item_id in row_of and slots.get(convention.slot) is None
    }
    sources = dict(Item.objects.filter(pk__in=list(open_slot)).values_list("pk", "source_id"))
    slot = SLOT_BY_NAME[convention.slot]
    s = SLOT_NAMES.index(convention.slot)
    return [
        Match(
            gold_id,
            item_id,
            sources.get(item_id, ""),
            [slot.values[v] if v >= 0 else "" for v in data.table[row_of[item_id], :, s]],
        )
        for item_id, gold_id in sorted(open_slot.items(), key=lambda kv: sources.get(kv[0], ""))
    ]
