"""Drawing item sets: seeded, optionally stratified by reference label, optionally disjoint."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from annotator.models import Item, ItemSet, ItemSetMember
from annotator.queries import item_set_members_insert


class DrawError(ValueError):
    """A draw or an item set refused; ``field`` names the input at fault (the API's 400 says it),
    ``taken`` says the name is another set's."""

    def __init__(self, message: str, *, field: str = "", taken: bool = False) -> None:
        super().__init__(message)
        self.field = field
        self.taken = taken

    @property
    def api_status(self) -> int:
        """409 for a name already taken, else 400."""
        return 409 if self.taken else 400

    def api_body(self) -> dict[str, Any]:
        field = "name" if self.api_status == 409 else self.field
        body: dict[str, Any] = {"detail": str(self)}
        if field:
            body[field] = [str(self)]  # as every other 400 names its field
        return body


def draw_ids(
    candidates: list[tuple[int, str]],
    *,
    seed: int,
    per_stratum: int | None = None,
    size: int | None = None,
) -> list[int]:
    """Pure: pick item ids from (id, label) pairs. Stratified when ``per_stratum`` is given
    (that many of every label), else ``size`` items overall. The same seed and candidates always
    give the same ids, in a shuffled queue order."""
    rng = random.Random(seed)
    ordered = sorted(candidates)
    if per_stratum is not None:
        by_label: dict[str, list[int]] = defaultdict(list)
        for item_id, label in ordered:
            by_label[label].append(item_id)
        short = {label: len(ids) for label, ids in by_label.items() if len(ids) < per_stratum}
        if short:
            detail = ", ".join(
                _("%(label)s has %(n)s") % {"label": label, "n": n} for label, n in sorted(short.items())
            )
            raise DrawError(
                _("not enough items for %(n)s per label: %(detail)s") % {"n": per_stratum, "detail": detail},
                field="per_stratum",
            )
        chosen = [i for label in sorted(by_label) for i in rng.sample(by_label[label], per_stratum)]
    else:
        if size is None or size < 1:
            raise DrawError(_("give a size, or a number per label"))
        if size > len(ordered):
            raise DrawError(
                _("asked for %(size)s items but only %(n)s are available")
                % {"size": size, "n": len(ordered)},
                field="size",
            )
        chosen = rng.sample([i for i, _ in ordered], size)
    rng.shuffle(chosen)
    return chosen


@transaction.atomic
def item_set_draw(
    *,
    name: str,
    seed: int,
    tier: str = ItemSet.Tier.OTHER,
    per_stratum: int | None = None,
    size: int | None = None,
    disjoint_from: ItemSet | None = None,
    source: str = "",
    created_by: AbstractBaseUser | None = None,
) -> ItemSet:
    if ItemSet.objects.filter(name=name).exists():
        raise _taken(name)
    items = Item.objects.all()
    if source:
        items = items.filter(source=source)
    if disjoint_from is not None:
        items = items.exclude(item_sets=disjoint_from)
    ids = draw_ids(
        list(items.values_list("id", "reference_label")), seed=seed, per_stratum=per_stratum, size=size
    )
    item_set = _new_item_set(
        name=name,
        tier=tier,
        seed=seed,
        stratify_by="reference_label" if per_stratum is not None else "",
        per_stratum=per_stratum,
        size=len(ids),
        disjoint_from=disjoint_from,
        source_filter=source,
        created_by=created_by,
    )
    item_set_members_insert(item_set.pk, ids)
    return item_set


def _taken(name: str) -> DrawError:
    return DrawError(_("an item set named %(name)s already exists") % {"name": repr(name)}, taken=True)


def _new_item_set(**fields: Any) -> ItemSet:
    """The ItemSet row; DrawError when the name was taken since the caller checked it (another
    request created a set of that name at the same moment), as when it was taken before."""
    if not str(fields["name"]).isprintable():
        raise DrawError(
            _("item set name %(name)s: no control characters (newline, tab)")
            % {"name": repr(fields["name"])},
            field="name",
        )
    try:
        with transaction.atomic():
            return ItemSet.objects.create(**fields)
    except IntegrityError:
        if ItemSet.objects.filter(name=fields["name"]).exists():
            raise _taken(fields["name"]) from None
        raise


@transaction.atomic
def item_set_from_items(*, name: str, items: list[Item], tier: str = ItemSet.Tier.OTHER) -> ItemSet:
    """An item set of given items in the given order (demo data, imported passes)."""
    item_set = _new_item_set(name=name, tier=tier, size=len(items))
    ItemSetMember.objects.bulk_create(
        [ItemSetMember(item_set=item_set, item=item, position=p) for p, item in enumerate(items)]
    )
    return item_set


@transaction.atomic
def item_set_of_ids(
    *,
    name: str,
    item_ids: list[int],
    tier: str = ItemSet.Tier.OTHER,
    created_by: AbstractBaseUser | None = None,
    ids_checked: bool = False,
) -> ItemSet:
    """An item set of the given item ids in the given order (an import's rows, a script's pick);
    DrawError names a taken name, a repeated id or ids that are no item (unless ``ids_checked``:
    the caller has just read them from the database)."""
    if ItemSet.objects.filter(name=name).exists():
        raise _taken(name)
    if not item_ids:
        raise DrawError(_("an item set needs at least one item"), field="item_ids")
    repeated = sorted(i for i, n in Counter(item_ids).items() if n > 1)
    if repeated:
        raise DrawError(
            _("item ids repeat: %(ids)s") % {"ids": ", ".join(map(str, repeated[:10]))}, field="item_ids"
        )
    found = set() if ids_checked else set(Item.objects.filter(pk__in=item_ids).values_list("pk", flat=True))
    missing = [] if ids_checked else [i for i in item_ids if i not in found]
    if missing:
        raise DrawError(
            _("no item has the id %(ids)s") % {"ids": ", ".join(map(str, missing[:10]))}, field="item_ids"
        )
    item_set = _new_item_set(name=name, tier=tier, size=len(item_ids), created_by=created_by)
    item_set_members_insert(item_set.pk, item_ids)  # an import's thousands of rows, at once
    return item_set
