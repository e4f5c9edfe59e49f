"""Conventions and gold: propose, vote, apply with a preview, revise; resolve item by item.

Every write is a service here (``<noun>_<verb>``, keyword-only); every gold change leaves a
GoldChange row: who, when, from, to, why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from adjudication.agreement.analysis import round_analysis, round_signature
from adjudication.gold.review_marks import (
    annotation_versions,
    annotations_changed,
    joined_reason,
    mark_revised,
    reason_parts,
    revised_key,
    revision_reason,
    synced_key,
    unmark_revision,
)
from adjudication.models import Convention, GoldChange, GoldConstrual, GoldItem, Vote
from adjudication.queries import json_key_set, rows_insert, rows_update
from annotator.events import event_send
from annotator.models import Assignment, Item, Round
from annotator.versions import round_version
from nsmcore.mapper import route_batch
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS
from rules.rulesets import active_rule_set

UNANIMOUS, CONVENTION, ADJUDICATED = "unanimous", "convention", "adjudicated"


#: matches a convention's page and API list (the count covers them all)
PREVIEW_SIZE = 200


class AdjudicationError(ValueError):
    """An adjudication step that cannot be taken; the message says why, and ``field`` names the
    input at fault when one is (the API's 400 says it)."""

    api_status = 400

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field

    def api_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": str(self)}
        if self.field:
            body[self.field] = [str(self)]  # as every other 400 names its field
        return body


class AdjudicationConflict(AdjudicationError):
    """A step refused by the state a record is in now (a convention already decided, a vote
    already cast, a gold record changed since it was read), not by the values asked for: the API
    answers it 409, bad values 400."""

    api_status = 409


class StaleGold(AdjudicationConflict):
    """A resolution based on an older version of the gold record than the stored one."""

    def __init__(self, message: str, *, current: int) -> None:
        super().__init__(message)
        self.current = current

    def api_body(self) -> dict[str, Any]:
        return {"detail": str(self), "current_version": self.current}


# Conventions -------------------------------------------------------------------------------------


def acceptance_rule() -> tuple[int, float]:
    """(quorum, majority): a convention is decided once ``quorum`` adjudicators have voted, and
    accepted when more than ``majority`` of the votes approve."""
    return settings.NSM_CONVENTION_QUORUM, settings.NSM_CONVENTION_MAJORITY


def vote_outcome(*, votes: int, approvals: int) -> bool | None:
    """The acceptance rule applied to a tally: None while fewer than the quorum have voted, else
    whether more than the majority approve. Conventions and rule set revisions both use it."""
    quorum, majority = acceptance_rule()
    if votes < quorum:
        return None
    return approvals / votes > majority


def _check_values(slot: str, values: list[str]) -> None:
    if slot not in SLOT_BY_NAME:
        raise AdjudicationError(
            _("unknown slot %(slot)s; slots: %(slots)s")
            % {"slot": repr(slot), "slots": ", ".join(SLOT_NAMES)}
        )
    allowed = SLOT_BY_NAME[slot].values
    for value in values:
        if value not in allowed:
            raise AdjudicationError(
                _("%(slot)s: %(value)s is not an allowed value; allowed: %(allowed)s")
                % {"slot": slot, "value": repr(value), "allowed": ", ".join(allowed)}
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
        raise AdjudicationError(_("a convention settles a dispute between two different values"))
    if chosen not in (value_a, value_b):
        raise AdjudicationError(_("the chosen value must be %(a)s or %(b)s") % {"a": value_a, "b": value_b})
    if not rule.strip():
        raise AdjudicationError(_("write the convention in words: it joins the guidelines"))
    pair = Q(value_a=value_a, value_b=value_b) | Q(value_a=value_b, value_b=value_a)
    live = Convention.objects.filter(
        pair, round=round_, slot=slot, status__in=[Convention.Status.PROPOSED, Convention.Status.ACCEPTED]
    ).first()
    if live is not None:
        raise AdjudicationConflict(
            _("%(convention)s already covers %(slot)s %(a)s / %(b)s (%(status)s): revise it")
            % {"convention": live.label, "slot": slot, "a": value_a, "b": value_b, "status": _(live.status)}
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
        raise AdjudicationConflict(
            _("%(convention)s is %(status)s; only a proposed convention takes votes")
            % {"convention": convention.label, "status": _(convention.status)}
        )
    try:
        with transaction.atomic():
            Vote.objects.create(
                convention=convention, adjudicator=user, approve=approve, comment=comment.strip()
            )
    except IntegrityError:
        raise AdjudicationConflict(
            _("%(user)s has already voted on %(convention)s")
            % {"user": user.username, "convention": convention.label}
        ) from None
    counts = convention.votes.aggregate(n=Count("id"), yes=Count("id", filter=Q(approve=True)))
    accepted = vote_outcome(votes=counts["n"], approvals=counts["yes"])
    if accepted is not None:
        with transaction.atomic():
            if accepted:
                Convention.objects.filter(number=convention.number, status=Convention.Status.ACCEPTED).update(
                    status=Convention.Status.SUPERSEDED
                )
            status = Convention.Status.ACCEPTED if accepted else Convention.Status.REJECTED
            Convention.objects.filter(pk=convention.pk).update(status=status, decided_at=timezone.now())
            decided = {"label": convention.label, "slot": convention.slot, "chosen": convention.chosen}
            event_send("convention.decided", {"convention": convention.pk, "status": status, **decided})
            if not accepted:
                unmark_revision(convention)
    convention.refresh_from_db()
    return convention


def convention_withdraw(*, user, convention: Convention) -> Convention:
    if convention.proposer_id != user.pk:
        raise AdjudicationError(_("only the proposer can withdraw a convention"))
    if convention.status != Convention.Status.PROPOSED:
        raise AdjudicationConflict(
            _("%(convention)s is %(status)s; only a proposed one can be withdrawn")
            % {"convention": convention.label, "status": _(convention.status)}
        )
    with transaction.atomic():
        # conditional: a revision decided meanwhile keeps its status and its review marks
        withdrawn = Convention.objects.filter(pk=convention.pk, status=Convention.Status.PROPOSED).update(
            status=Convention.Status.WITHDRAWN, decided_at=timezone.now()
        )
        if not withdrawn:
            raise AdjudicationConflict(
                _("%(convention)s was decided meanwhile; it can no longer be withdrawn")
                % {"convention": convention.label}
            )
        unmark_revision(convention)
    convention.refresh_from_db()
    return convention


def convention_revise(*, user, convention: Convention, chosen: str, rule: str) -> Convention:
    """A new version of an accepted convention, to be voted on. The items its earlier versions
    resolved are marked for review at once: their gold may no longer follow the convention."""
    if convention.status != Convention.Status.ACCEPTED:
        raise AdjudicationConflict(
            _("%(convention)s is %(status)s; only the accepted version can be revised")
            % {"convention": convention.label, "status": _(convention.status)}
        )
    if chosen not in (convention.value_a, convention.value_b):
        raise AdjudicationError(
            _("the chosen value must be %(a)s or %(b)s") % {"a": convention.value_a, "b": convention.value_b}
        )
    if not rule.strip():
        raise AdjudicationError(_("write the revised convention in words"))
    with transaction.atomic():
        latest = Convention.objects.filter(number=convention.number).aggregate(v=Max("version"))["v"]
        if Convention.objects.filter(number=convention.number, status=Convention.Status.PROPOSED).exists():
            raise AdjudicationConflict(
                _("a revision of C%(number)s is already proposed") % {"number": convention.number}
            )
        revision = Convention.objects.create(
            number=convention.number, version=latest + 1, slot=convention.slot, value_a=convention.value_a,
            value_b=convention.value_b, chosen=chosen, rule=rule.strip(), round=convention.round,
            source={"kind": "revision", "of": convention.label}, proposer=user,
        )  # fmt: skip
        flagged = []
        for gold in GoldItem.objects.filter(round=convention.round).prefetch_related("construals"):
            if any(_set_by(c, convention.number) for c in gold.construals.all()):
                earlier = reason_parts(gold.review_reason) if gold.needs_review else []
                parts = [*earlier, revision_reason(revision)]
                flagged.append(GoldItem(pk=gold.pk, needs_review=True, review_reason=joined_reason(parts)))
        rows_update(GoldItem, ["needs_review", "review_reason"], flagged)
    return revision


def _set_by(construal: GoldConstrual, number: int) -> bool:
    return any(
        p.get("source") == CONVENTION and p.get("convention") == number for p in construal.provenance.values()
    )


# Gold records ------------------------------------------------------------------------------------


def gold_sync(round_: Round) -> int:
    """Open a gold record for every item of the round whose annotations are all in: unanimous
    slots are filled (provenance ``unanimous``); an item whose slots all agree is gold at once.
    A record whose annotations changed since it was opened or last checked (an annotator saved
    again) keeps its slots, is marked for review with who revised, and now refers to the
    annotations as they stand. Returns how many were opened.

    It does the work once per version of the round's annotations (only a new submission can open
    a record or change what one was built from)."""
    synced = synced_key(round_.pk)
    version = round_version(round_.pk, round_signature)
    if cache.get(synced) == version:
        return 0
    # read before the analysis: a save landing in between is then seen as a revision, not lost
    seen_now = annotation_versions(round_)
    analysis = round_analysis(round_)
    data = analysis.data
    if not data.coders:
        cache.set(synced, version, timeout=None)
        return 0
    pending = set(
        Assignment.objects.filter(round=round_, status=Assignment.Status.PENDING).values_list(
            "item_id", flat=True
        )
    )
    existing = GoldItem.objects.filter(item_id__in=data.item_ids.tolist()).values_list(
        "pk", "item_id", "round_id", "annotations_seen"
    )
    have, revised = set(), []
    for pk, item_id, round_id, before in existing:
        have.add(item_id)
        if round_id == round_.pk and annotations_changed(seen_now, item_id, before):
            revised.append(pk)
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
        golds, rows = [], []
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
        mark_revised(revised, seen_now)
        if revised:  # the count gold_revised keeps is of the markers before: forget it now and at commit
            cache.delete(revised_key(round_.pk))
            transaction.on_commit(lambda: cache.delete(revised_key(round_.pk)))
        # adjudication.queries.rows_insert says why these are not bulk_create
        now = timezone.now()
        rows_insert(
            GoldItem,
            ["item_id", "round_id", "status", "needs_review", "review_reason", "pivotal_slots",
             "annotations_seen", "updated_at"],
            [[g.item_id, round_.pk, g.status, False, "", [], seen_now.get(g.item_id, {}), now]
             for g in golds],
        )  # fmt: skip
        ids = dict(
            GoldItem.objects.filter(item_id__in=[g.item_id for g in golds]).values_list("item_id", "pk")
        )
        routings = _routings([slots for slots, _ in rows], rule_set)
        fields = ["gold_id", "index", "slots", "provenance", "residue", "notes", *_UNROUTED]
        rows_insert(
            GoldConstrual,
            fields,
            [
                [ids[g.item_id], 1, slots, provenance, "", "", *(routing[k] for k in _UNROUTED)]
                for g, (slots, provenance), routing in zip(golds, rows, routings, strict=True)
            ],
        )
        rows_insert(
            GoldChange,
            ["gold_id", "who_id", "at", "before", "after", "why"],
            [
                [ids[g.item_id], None, now, None, {"slots": slots}, "opened: unanimous slots filled"]
                for g, (slots, _) in zip(golds, rows, strict=True)
            ],
        )
        created = len(golds)
    transaction.on_commit(lambda: cache.set(synced, version, timeout=None))
    return created


_UNROUTED = {"label": "", "rule": None, "fired": [], "abstention": "", "rule_set_version": ""}


def _routings(many: list[dict[str, str | None]], rule_set: Any) -> list[dict[str, Any]]:
    """The routing fields of each slot assignment: complete ones routed in one batch through the
    rule set, incomplete ones (a slot still unresolved) left unrouted."""
    complete = [k for k, slots in enumerate(many) if all(v is not None for v in slots.values())]
    routed = route_batch([many[k] for k in complete], rule_set) if complete else []
    out = [dict(_UNROUTED) for _ in many]
    for k, routing in zip(complete, routed, strict=True):
        out[k] = {
            "label": routing.label,
            "rule": routing.rule_index,
            "fired": list(routing.fired),
            "abstention": routing.abstention_type or "",
            "rule_set_version": routing.rule_set_version,
        }
    return out


@dataclass(frozen=True)
class Match:
    gold_id: int
    item_id: int
    source_id: str
    values: list[str]  # each annotator's value on the slot


def _matching_rows(convention: Convention) -> tuple[Any, np.ndarray]:
    """The round's analysis, and the rows of its table where the annotators gave exactly the
    convention's two values on its slot (both present, nothing else)."""
    analysis = round_analysis(convention.round)
    data = analysis.data
    if not data.coders:
        return analysis, np.zeros(0, dtype=np.int64)
    s = SLOT_NAMES.index(convention.slot)
    slot = SLOTS[s]
    a, b = slot.index(convention.value_a), slot.index(convention.value_b)
    column = data.table[:, :, s]
    exact = (
        (column == a).any(axis=1)
        & (column == b).any(axis=1)
        & ((column == a) | (column == b) | (column < 0)).all(axis=1)
    )
    return analysis, np.nonzero(exact)[0]


def _open_construals(round_: Round, *fields: str) -> Any:
    return GoldConstrual.objects.filter(
        gold__round=round_, gold__status=GoldItem.Status.OPEN, index=1
    ).values_list(*fields)


def convention_matches(convention: Convention) -> list[Match]:
    """The open conflicts this convention settles: gold records of its round whose slot is
    unresolved and whose annotators gave exactly its two values. It only reads, so pages can show
    it on GET; records not yet opened (``gold_sync``) are not among them."""
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


def convention_apply(*, user, convention: Convention) -> int:
    """Set the slot of every matched conflict to the chosen value, in one transaction. Each slot
    set records the convention and its version; an item whose slots are now all resolved is
    routed and becomes gold. Returns how many items changed."""
    if convention.status != Convention.Status.ACCEPTED:
        raise AdjudicationConflict(
            _("%(convention)s is %(status)s; only an accepted convention is applied")
            % {"convention": convention.label, "status": _(convention.status)}
        )
    gold_sync(convention.round)
    analysis, matching = _matching_rows(convention)
    items = {int(analysis.data.item_ids[r]) for r in matching}
    rule_set = active_rule_set()
    slot, chosen = convention.slot, convention.chosen
    mark = {
        "source": CONVENTION,
        "convention": convention.number,
        "version": convention.version,
        "by": user.username,
    }
    dispute = f"{slot} {convention.value_a}/{convention.value_b}"
    why = f"convention {convention.label}: {dispute} -> {chosen}"
    with transaction.atomic():
        rows = _open_construals(convention.round, "pk", "gold_id", "gold__item_id", "slots")
        rows = [r for r in rows.select_for_update() if r[2] in items and r[3].get(slot) is None]
        settled = [{**slots, slot: chosen} for _, _, _, slots in rows]
        updated = [
            GoldConstrual(pk=pk, gold_id=gold_id, slots=slots, **routing)
            for (pk, gold_id, _, _), slots, routing in zip(
                rows, settled, _routings(settled, rule_set), strict=True
            )
        ]
        complete = [c for c in updated if c.label]
        rows_update(GoldConstrual, _CONSTRUAL_FIELDS, updated)
        json_key_set(GoldConstrual, "provenance", [c.pk for c in updated], slot, mark)
        GoldItem.objects.filter(pk__in=[c.gold_id for c in complete]).update(
            status=GoldItem.Status.RESOLVED, updated_at=timezone.now()
        )
        now = timezone.now()
        rows_insert(
            GoldChange,
            ["gold_id", "who_id", "at", "before", "after", "why"],
            [[c.gold_id, user.pk, now, {slot: None}, {slot: chosen, "label": c.label}, why] for c in updated],
        )
        Convention.objects.filter(pk=convention.pk).update(applied_at=now)
    return len(updated)


_CONSTRUAL_FIELDS = ["slots", "label", "rule", "fired", "abstention", "rule_set_version"]


def gold_version(gold: GoldItem) -> int:
    """A gold record's version: how many changes its audit trail holds (every change adds one)."""
    return gold.changes.count()


def gold_resolve(
    *,
    user,
    gold: GoldItem,
    values: dict[str, str],
    why: str,
    second: dict[str, str] | None = None,
    base_version: int | None = None,
) -> GoldItem:
    """Resolve an item by hand: ``values`` sets slots of the (first) construal; ``second``, when
    given, keeps a second construal that differs from the first in those slots (pivotal slots).
    ``why`` is required: the audit trail must say why a person chose these values.
    ``base_version``, when given, is the ``gold_version`` the decision was made on: a record
    changed since (another resolution, a convention applied) raises StaleGold, writing nothing."""
    why = why.strip()
    if not why:
        raise AdjudicationError(
            _("why: say why the item is resolved this way (it goes into the audit trail)"), field="why"
        )
    _check_values_each(values)
    if second:
        _check_values_each(second)
    with transaction.atomic():
        gold = GoldItem.objects.select_for_update().get(pk=gold.pk)
        if base_version is not None and (current := gold_version(gold)) != base_version:
            raise StaleGold(
                _(
                    "gold of item %(item)s changed since version %(version)s (now %(current)s): "
                    "read it again and decide on what it is now"
                )
                % {"item": gold.item_id, "version": base_version, "current": current},
                current=current,
            )
        first = gold.construals.get(index=1)
        before = {"slots": first.slots, "second": _second_slots(gold)}
        mark = {"source": ADJUDICATED, "by": user.username}
        slots = {**first.slots, **values}
        provenance = {**first.provenance, **{name: mark for name in values}}
        missing = [name for name in SLOT_NAMES if slots.get(name) is None]
        if missing:
            raise AdjudicationError(
                _("choose a value for every unresolved slot: %(slots)s") % {"slots": ", ".join(missing)},
                field="values",
            )
        rule_set = active_rule_set()
        first.slots, first.provenance = slots, provenance
        for field, value in _routings([slots], rule_set)[0].items():
            setattr(first, field, value)
        first.save()
        pivotal = []
        if second:
            pivotal = [name for name in SLOT_NAMES if name in second and second[name] != slots[name]]
            if not pivotal:
                raise AdjudicationError(
                    _("a second construal must differ from the first in at least one slot")
                )
            other_slots = {**slots, **{name: second[name] for name in pivotal}}
            other_prov = {**provenance, **{name: mark for name in pivotal}}
            GoldConstrual.objects.update_or_create(
                gold=gold,
                index=2,
                defaults={
                    "slots": other_slots,
                    "provenance": other_prov,
                    **_routings([other_slots], rule_set)[0],
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
        GoldChange.objects.create(gold=gold, who=user, before=before, after=after, why=why)
        event = {"gold": gold.pk, "item": gold.item_id, "round": gold.round_id, "by": user.get_username()}
        event_send("gold.resolved", {**event, **after})  # webhooks (annotator.events)
    return gold


def _second_slots(gold: GoldItem) -> dict | None:
    other = GoldConstrual.objects.filter(gold=gold, index=2).values_list("slots", flat=True).first()
    return other


def _check_values_each(values: dict[str, str]) -> None:
    for name, value in values.items():
        _check_values(name, [value])
