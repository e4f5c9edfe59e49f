"""Conventions and gold: propose, vote, apply with a preview, revise; resolve item by item.

Every write is a service here (``<noun>_<verb>``, keyword-only); every gold change leaves a
GoldChange row: who, when, from, to, why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from adjudication.analytics import round_analysis
from adjudication.models import Convention, GoldChange, GoldConstrual, GoldItem, Vote
from adjudication.rulesets import active_rule_set
from annotator.models import Assignment, Item, Round
from nsmcore.mapper import route
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS, Explication

UNANIMOUS, CONVENTION, ADJUDICATED = "unanimous", "convention", "adjudicated"


class AdjudicationError(ValueError):
    """An adjudication step that cannot be taken; the message says why."""


# Conventions -------------------------------------------------------------------------------------


def acceptance_rule() -> tuple[int, float]:
    """(quorum, majority): a convention is decided once ``quorum`` adjudicators have voted, and
    accepted when more than ``majority`` of the votes approve."""
    return settings.NSM_CONVENTION_QUORUM, settings.NSM_CONVENTION_MAJORITY


def _check_values(slot: str, values: list[str]) -> None:
    if slot not in SLOT_BY_NAME:
        raise AdjudicationError(f"unknown slot {slot!r}; slots: {', '.join(SLOT_NAMES)}")
    allowed = SLOT_BY_NAME[slot].values
    for value in values:
        if value not in allowed:
            raise AdjudicationError(
                f"{slot}: {value!r} is not an allowed value; allowed: {', '.join(allowed)}"
            )


def convention_propose(
    *,
    user,
    round_: Round,
    slot: str,
    value_a: str,
    value_b: str,
    chosen: str,
    rule: str,
    source: dict | None = None,
) -> Convention:
    _check_values(slot, [value_a, value_b, chosen])
    if value_a == value_b:
        raise AdjudicationError("a convention settles a dispute between two different values")
    if chosen not in (value_a, value_b):
        raise AdjudicationError(f"the chosen value must be {value_a} or {value_b}")
    if not rule.strip():
        raise AdjudicationError("write the convention in words: it joins the guidelines")
    pair = Q(value_a=value_a, value_b=value_b) | Q(value_a=value_b, value_b=value_a)
    live = Convention.objects.filter(
        pair, round=round_, slot=slot, status__in=[Convention.Status.PROPOSED, Convention.Status.ACCEPTED]
    ).first()
    if live is not None:
        raise AdjudicationError(
            f"{live.label} already covers {slot} {value_a} / {value_b} ({live.status}): revise it"
        )
    with transaction.atomic():
        number = (Convention.objects.select_for_update().aggregate(n=Max("number"))["n"] or 0) + 1
        return Convention.objects.create(
            number=number, slot=slot, value_a=value_a, value_b=value_b, chosen=chosen, rule=rule.strip(),
            round=round_, source=source or {}, proposer=user,
        )  # fmt: skip


def convention_vote(*, user, convention: Convention, approve: bool, comment: str = "") -> Convention:
    """One vote per adjudicator; the convention is decided when the quorum is reached."""
    if convention.status != Convention.Status.PROPOSED:
        raise AdjudicationError(
            f"{convention.label} is {convention.status}; only a proposed convention takes votes"
        )
    try:
        with transaction.atomic():
            Vote.objects.create(
                convention=convention, adjudicator=user, approve=approve, comment=comment.strip()
            )
    except IntegrityError:
        raise AdjudicationError(f"{user.username} has already voted on {convention.label}") from None
    quorum, majority = acceptance_rule()
    counts = convention.votes.aggregate(n=Count("id"), yes=Count("id", filter=Q(approve=True)))
    if counts["n"] >= quorum:
        accepted = counts["yes"] / counts["n"] > majority
        with transaction.atomic():
            if accepted:
                Convention.objects.filter(number=convention.number, status=Convention.Status.ACCEPTED).update(
                    status=Convention.Status.SUPERSEDED
                )
            status = Convention.Status.ACCEPTED if accepted else Convention.Status.REJECTED
            Convention.objects.filter(pk=convention.pk).update(status=status, decided_at=timezone.now())
    convention.refresh_from_db()
    return convention


def convention_withdraw(*, user, convention: Convention) -> Convention:
    if convention.proposer_id != user.pk:
        raise AdjudicationError("only the proposer can withdraw a convention")
    if convention.status != Convention.Status.PROPOSED:
        raise AdjudicationError(
            f"{convention.label} is {convention.status}; only a proposed one can be withdrawn"
        )
    Convention.objects.filter(pk=convention.pk).update(
        status=Convention.Status.WITHDRAWN, decided_at=timezone.now()
    )
    convention.refresh_from_db()
    return convention


def convention_revise(*, user, convention: Convention, chosen: str, rule: str) -> Convention:
    """A new version of an accepted convention, to be voted on. The items its earlier versions
    resolved are marked for review at once: their gold may no longer follow the convention."""
    if convention.status != Convention.Status.ACCEPTED:
        raise AdjudicationError(
            f"{convention.label} is {convention.status}; only the accepted version can be revised"
        )
    if chosen not in (convention.value_a, convention.value_b):
        raise AdjudicationError(f"the chosen value must be {convention.value_a} or {convention.value_b}")
    if not rule.strip():
        raise AdjudicationError("write the revised convention in words")
    with transaction.atomic():
        latest = Convention.objects.filter(number=convention.number).aggregate(v=Max("version"))["v"]
        if Convention.objects.filter(number=convention.number, status=Convention.Status.PROPOSED).exists():
            raise AdjudicationError(f"a revision of C{convention.number} is already proposed")
        revision = Convention.objects.create(
            number=convention.number, version=latest + 1, slot=convention.slot, value_a=convention.value_a,
            value_b=convention.value_b, chosen=chosen, rule=rule.strip(), round=convention.round,
            source={"kind": "revision", "of": convention.label}, proposer=user,
        )  # fmt: skip
        flagged = []
        for gold in GoldItem.objects.filter(round=convention.round).prefetch_related("construals"):
            if any(_set_by(c, convention.number) for c in gold.construals.all()):
                flagged.append(gold.pk)
        reason = f"C{convention.number} revised to v{revision.version}"
        GoldItem.objects.filter(pk__in=flagged).update(needs_review=True, review_reason=reason)
    return revision


def _set_by(construal: GoldConstrual, number: int) -> bool:
    return any(
        p.get("source") == CONVENTION and p.get("convention") == number for p in construal.provenance.values()
    )


# Gold records ------------------------------------------------------------------------------------


def gold_sync(round_: Round) -> int:
    """Open a gold record for every item of the round whose annotations are all in: unanimous
    slots are filled (provenance ``unanimous``); an item whose slots all agree is gold at once.
    Items that already have a gold record are left alone. Returns how many were opened."""
    analysis = round_analysis(round_)
    data = analysis.data
    if not data.coders:
        return 0
    pending = set(
        Assignment.objects.filter(round=round_, status=Assignment.Status.PENDING).values_list(
            "item_id", flat=True
        )
    )
    have = set(GoldItem.objects.filter(item_id__in=data.item_ids.tolist()).values_list("item_id", flat=True))
    table = data.table
    present = table >= 0
    counted = present.sum(axis=1)  # (items, slots): coders who gave a value
    first = np.where(present, table, np.int16(32767)).min(axis=1)
    last = np.where(present, table, np.int16(-1)).max(axis=1)
    agree = (counted >= 2) & (first == last)
    enough = counted.min(axis=1) >= 2
    rule_set = active_rule_set()
    created = 0
    with transaction.atomic():
        golds, construals, rows = [], [], []
        for r, item_id in enumerate(data.item_ids.tolist()):
            if item_id in have or item_id in pending or not enough[r]:
                continue
            slots = {
                name: (SLOTS[s].values[first[r, s]] if agree[r, s] else None)
                for s, name in enumerate(SLOT_NAMES)
            }
            provenance = {name: {"source": UNANIMOUS} for name, v in slots.items() if v is not None}
            done = all(v is not None for v in slots.values())
            golds.append(GoldItem(item_id=item_id, round=round_, status="resolved" if done else "open"))
            rows.append((slots, provenance))
        GoldItem.objects.bulk_create(golds, batch_size=2000)
        ids = dict(
            GoldItem.objects.filter(item_id__in=[g.item_id for g in golds]).values_list("item_id", "pk")
        )
        for gold, (slots, provenance) in zip(golds, rows, strict=True):
            routing = _routing_with(slots, rule_set)
            construals.append(
                GoldConstrual(gold_id=ids[gold.item_id], slots=slots, provenance=provenance, **routing)
            )
        GoldConstrual.objects.bulk_create(construals, batch_size=2000)
        GoldChange.objects.bulk_create(
            [
                GoldChange(
                    gold_id=ids[g.item_id], after={"slots": c.slots}, why="opened: unanimous slots filled"
                )
                for g, c in zip(golds, construals, strict=True)
            ],
            batch_size=2000,
        )
        created = len(golds)
    return created


def _routing_with(slots: dict[str, str | None], rule_set: Any) -> dict[str, Any]:
    if any(v is None for v in slots.values()):
        return {"label": "", "rule": None, "fired": [], "abstention": "", "rule_set_version": ""}
    routing = route(Explication(**slots), rule_set)
    return {
        "label": routing.label,
        "rule": routing.rule_index,
        "fired": list(routing.fired),
        "abstention": routing.abstention_type or "",
        "rule_set_version": routing.rule_set_version,
    }


@dataclass(frozen=True)
class Match:
    gold_id: int
    item_id: int
    source_id: str
    values: list[str]  # each annotator's value on the slot


def convention_matches(convention: Convention) -> list[Match]:
    """The open conflicts this convention settles: gold records of its round whose slot is
    unresolved and whose annotators gave exactly its two values."""
    round_ = convention.round
    gold_sync(round_)
    analysis = round_analysis(round_)
    data = analysis.data
    if not data.coders:
        return []
    s = SLOT_NAMES.index(convention.slot)
    slot = SLOTS[s]
    a, b = slot.index(convention.value_a), slot.index(convention.value_b)
    column = data.table[:, :, s]
    present = column >= 0
    has_a = (column == a).any(axis=1)
    has_b = (column == b).any(axis=1)
    only = ((column == a) | (column == b) | ~present).all(axis=1)
    rows = np.nonzero(has_a & has_b & only)[0]
    item_ids = [int(data.item_ids[r]) for r in rows]
    open_slot = {
        c.gold.item_id: c.gold_id
        for c in GoldConstrual.objects.filter(gold__item_id__in=item_ids, index=1)
        .select_related("gold")
        .only("slots", "gold__item_id")
        if c.slots.get(convention.slot) is None
    }
    sources = dict(Item.objects.filter(pk__in=list(open_slot)).values_list("pk", "source_id"))
    return [
        Match(open_slot[i], i, sources.get(i, ""), [slot.values[v] if v >= 0 else "" for v in column[r]])
        for r, i in zip(rows.tolist(), item_ids, strict=True)
        if i in open_slot
    ]


def convention_apply(*, user, convention: Convention) -> int:
    """Set the slot of every matched conflict to the chosen value, in one transaction. Each slot
    set records the convention and its version; an item whose slots are now all resolved is
    routed and becomes gold. Returns how many items changed."""
    if convention.status != Convention.Status.ACCEPTED:
        raise AdjudicationError(
            f"{convention.label} is {convention.status}; only an accepted convention is applied"
        )
    matches = convention_matches(convention)
    rule_set = active_rule_set()
    mark = {
        "source": CONVENTION,
        "convention": convention.number,
        "version": convention.version,
        "by": user.username,
    }
    dispute = f"{convention.slot} {convention.value_a}/{convention.value_b}"
    why = f"convention {convention.label}: {dispute} -> {convention.chosen}"
    with transaction.atomic():
        construals = list(
            GoldConstrual.objects.select_for_update().filter(
                gold_id__in=[m.gold_id for m in matches], index=1
            )
        )
        golds = {g.pk: g for g in GoldItem.objects.filter(pk__in=[c.gold_id for c in construals])}
        changes = []
        for c in construals:
            if c.slots.get(convention.slot) is not None:
                continue  # resolved meanwhile
            c.slots = {**c.slots, convention.slot: convention.chosen}
            c.provenance = {**c.provenance, convention.slot: mark}
            routing = _routing_with(c.slots, rule_set)
            for field, value in routing.items():
                setattr(c, field, value)
            gold = golds[c.gold_id]
            if all(v is not None for v in c.slots.values()):
                gold.status = GoldItem.Status.RESOLVED
            changes.append(
                GoldChange(
                    gold_id=c.gold_id, who=user, before={convention.slot: None},
                    after={convention.slot: convention.chosen, "label": routing["label"]}, why=why,
                )
            )  # fmt: skip
        fields = ["slots", "provenance", "label", "rule", "fired", "abstention", "rule_set_version"]
        GoldConstrual.objects.bulk_update(construals, fields, batch_size=2000)
        GoldItem.objects.bulk_update(list(golds.values()), ["status"], batch_size=2000)
        GoldChange.objects.bulk_create(changes, batch_size=2000)
        Convention.objects.filter(pk=convention.pk).update(applied_at=timezone.now())
    return len(changes)


def gold_resolve(
    *, user, gold: GoldItem, values: dict[str, str], second: dict[str, str] | None = None, why: str = ""
) -> GoldItem:
    """Resolve an item by hand: ``values`` sets slots of the (first) construal; ``second``, when
    given, keeps a second construal that differs from the first in those slots (pivotal slots)."""
    _check_values_each(values)
    if second:
        _check_values_each(second)
    with transaction.atomic():
        gold = GoldItem.objects.select_for_update().get(pk=gold.pk)
        first = gold.construals.get(index=1)
        before = {"slots": first.slots, "second": _second_slots(gold)}
        mark = {"source": ADJUDICATED, "by": user.username}
        slots = {**first.slots, **values}
        provenance = {**first.provenance, **{name: mark for name in values}}
        missing = [name for name in SLOT_NAMES if slots.get(name) is None]
        if missing:
            raise AdjudicationError(f"choose a value for every unresolved slot: {', '.join(missing)}")
        rule_set = active_rule_set()
        first.slots, first.provenance = slots, provenance
        for field, value in _routing_with(slots, rule_set).items():
            setattr(first, field, value)
        first.save()
        pivotal = []
        if second:
            pivotal = [name for name in SLOT_NAMES if name in second and second[name] != slots[name]]
            if not pivotal:
                raise AdjudicationError("a second construal must differ from the first in at least one slot")
            other_slots = {**slots, **{name: second[name] for name in pivotal}}
            other_prov = {**provenance, **{name: mark for name in pivotal}}
            GoldConstrual.objects.update_or_create(
                gold=gold,
                index=2,
                defaults={
                    "slots": other_slots,
                    "provenance": other_prov,
                    **_routing_with(other_slots, rule_set),
                },
            )
        else:
            GoldConstrual.objects.filter(gold=gold, index=2).delete()
        gold.status = GoldItem.Status.RESOLVED
        gold.pivotal_slots = pivotal
        gold.needs_review = False
        gold.review_reason = ""
        gold.save()
        after = {"slots": slots, "second": _second_slots(gold), "label": first.label}
        GoldChange.objects.create(
            gold=gold, who=user, before=before, after=after, why=why or "adjudicated by hand"
        )
    return gold


def _second_slots(gold: GoldItem) -> dict | None:
    other = GoldConstrual.objects.filter(gold=gold, index=2).values_list("slots", flat=True).first()
    return other


def _check_values_each(values: dict[str, str]) -> None:
    for name, value in values.items():
        _check_values(name, [value])
