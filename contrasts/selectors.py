"""Reads of minimal pairs: sets by name and version, an item by its id or source id, gold values."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, QuerySet
from django.utils.translation import gettext as _

from adjudication.models import GoldConstrual, GoldItem
from annotator.filters import MAX_ID, typed_id
from annotator.models import Item
from contrasts.models import MinimalPair, PairSet
from nsmcore.schema import SLOT_NAMES


class NotFound(LookupError):
    """No set or item answers to that name; the message says what there is."""


def pair_sets() -> QuerySet[PairSet]:
    """Every version of every set, with its number of pairs (``pair_count``)."""
    return PairSet.objects.select_related("created_by", "frozen_by").annotate(pair_count=Count("pairs"))


def set_pairs(pair_set: PairSet) -> QuerySet[MinimalPair]:
    return pair_set.pairs.select_related("item", "created_by").order_by("id")


def newest_version(name: str) -> int:
    return (
        PairSet.objects.filter(name=name).order_by("-version").values_list("version", flat=True).first() or 0
    )


def pair_set_named(name: str, version: int | None = None) -> PairSet:
    """``name`` at ``version`` (its newest when None); NotFound lists the sets there are."""
    found = PairSet.objects.filter(name=name)
    if version is not None:
        found = found.filter(version=version)
    pair_set = found.order_by("-version").first()
    if pair_set is None:
        names = sorted(set(PairSet.objects.values_list("name", flat=True)))
        if version is not None and names and name in names:
            versions = PairSet.objects.filter(name=name).order_by("version").values_list("version", flat=True)
            raise NotFound(
                _("set %(name)s has no version %(version)s; versions: %(versions)s")
                % {"name": name, "version": version, "versions": ", ".join(map(str, versions))}
            )
        raise NotFound(
            _("no set named %(name)s; sets: %(names)s")
            % {"name": repr(name), "names": ", ".join(names) or _("none yet")}
        )
    return pair_set


def item_lookup(reference: Any) -> Item:
    """An item by its id (a number), ``source:source_id`` or its source id alone (when one source
    holds it); NotFound says which."""
    if isinstance(reference, Item):
        return reference
    if isinstance(reference, int) and not isinstance(reference, bool):
        found = Item.objects.filter(pk=reference).first() if 0 < reference <= MAX_ID else None
        if found is None:
            raise NotFound(_("no item with id %(id)s") % {"id": reference})
        return found
    text = str(reference).strip() if isinstance(reference, str) else ""
    if not text:
        raise NotFound(_("give the item's id or its source id"))
    if (pk := typed_id(text)) is not None:
        found = Item.objects.filter(pk=pk).first()
        if found is not None:
            return found
    candidates = list(Item.objects.filter(source_id=text)[:3])
    if not candidates and ":" in text:
        source, _colon, source_id = text.partition(":")
        candidates = list(Item.objects.filter(source=source, source_id=source_id)[:3])
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise NotFound(
            _("source id %(id)s is in more than one source (%(sources)s): give source:source_id or the id")
            % {"id": repr(text), "sources": ", ".join(sorted({c.source for c in candidates}))}
        )
    raise NotFound(_("no item with id or source id %(id)s") % {"id": repr(text)})


def gold_values(item_ids: Any) -> dict[int, dict[str, str]]:
    """The twelve slots of each item's resolved gold (its first construal), by item id; items
    without resolved, complete gold are left out."""
    rows = GoldConstrual.objects.filter(
        index=1, gold__status=GoldItem.Status.RESOLVED, gold__item_id__in=list(item_ids)
    ).values_list("gold__item_id", "slots")
    return {
        item_id: {name: slots[name] for name in SLOT_NAMES}
        for item_id, slots in rows
        if all(slots.get(name) is not None for name in SLOT_NAMES)
    }


def newest_frozen_sets() -> list[PairSet]:
    """The newest frozen version of each set name: what a release (the export's contrast split)
    and a train job read; an open version is still being written."""
    newest: dict[str, PairSet] = {}
    for pair_set in PairSet.objects.filter(frozen_at__isnull=False).order_by("name", "-version"):
        newest.setdefault(pair_set.name, pair_set)
    return list(newest.values())
