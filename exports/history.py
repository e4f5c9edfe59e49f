"""The state of gold as of an export, rebuilt from what the database records of its history (a
selector: it reads, never writes), for the replay (exports.replay).

What is read, and how (docs/export.md, "Replay", says the same for readers):

- **Annotations**: the revisions (AnnotationRevision) of the round's assignments, control items
  left out, written by the recipe's ``as_of.annotation_revision``; each annotator's newest one by
  a moment counts, as the round's tables read the annotations as they stood. An annotation with no
  revision at all (written in bulk, outside the services) counts as it stands from its last change.
- **Gold decisions**: each gold record's audit trail (GoldChange) up to ``as_of.gold_change``, in
  order. *Opened*: the slots are those all of the round's annotators agreed on (two or more) in
  their revisions as they stood when it was opened (not the slots the row stored: so a changed
  revision shows); provenance ``unanimous``. *Convention*: the row names the convention and
  version; its slot takes that version's chosen value, if its votes cast by then accept it (the
  acceptance rule), marked with it and who applied it. *Hand resolution*: the slots the row's
  ``after`` changed from its ``before``, marked ``adjudicated`` by who; a second construal where
  ``after`` keeps one (its pivotal slots are where it differs). A slot a resolution set to the value
  it already had is not told by the row: it counts as adjudicated when it is the record's last
  resolution and the stored provenance says so. *Rule set*: re-routings are not replayed: every
  construal is routed again under the rule set active then.
- **Conventions**: a version is accepted by a moment when its first votes up to the quorum were
  cast by then and more than the majority of them approve; of a convention's accepted versions the
  last decided is the one in force.
- **Not recorded in the history, read as they stand**: the items (texts, labels), rounds (names,
  text fields), the members of the item sets made by then (the recipe's hash of them tells a
  change), a construal's residue and notes, and the verifier's line judgements (written once,
  never changed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db.models import Q
from django.utils.translation import gettext as _

import nsmcore
from adjudication.models import Convention, GoldChange, GoldConstrual, GoldItem, Vote
from annotator.models import SLOT_FIELDS, Annotation, AnnotationRevision, ItemSetMember, Round
from exports.recipe import NEVER, AsOf, activation_as_of
from nsmcore.agreement import MISSING, agreement
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS
from rules.rulesets import packaged_rule_set, rule_set_from_document

UNANIMOUS, CONVENTION, ADJUDICATED = "unanimous", "convention", "adjudicated"
RULE_SET_WHY = "rule set "  # adjudication.rule_revisions.services.revision_activate's why
_CONVENTION_WHY = re.compile(r"^convention C(\d+) v(\d+):")
LOOKUP = [{v: i for i, v in enumerate(slot.values)} for slot in SLOTS]


class KeyOrder:
    """The order the database gives a JSON object's keys back in (SQLite keeps them as written,
    PostgreSQL's jsonb shortest first), learnt from the stored provenance marks the replay reads:
    a mark rebuilt from the history is written in the order a stored one with the same keys has."""

    def __init__(self) -> None:
        self.known: dict[frozenset[str], tuple[str, ...]] = {}

    def learn(self, provenance: dict[str, Any]) -> None:
        for mark in provenance.values():
            if isinstance(mark, dict):
                self.known.setdefault(frozenset(mark), tuple(mark))

    def __call__(self, mark: dict[str, Any]) -> dict[str, Any]:
        order = self.known.get(frozenset(mark))
        return {k: mark[k] for k in order} if order else mark


_UNANIMOUS_MARK = {"source": UNANIMOUS}  # one object: every record's encoding reads it alike


# The rule set and conventions as of then -------------------------------------------------------


def rule_set_as_of(as_of: AsOf) -> tuple[nsmcore.RuleSet, Any]:
    """The rule set active then (the newest activation by then), and that activation; the packaged
    default when none had been recorded."""
    activation = activation_as_of(as_of)
    if activation is None:
        return packaged_rule_set(), None
    return rule_set_from_document(activation.version.document), activation


@dataclass
class ConventionBook:
    """Every convention version with its votes (id, time, approval) in the order cast, and the
    acceptance rule (quorum, majority)."""

    quorum: int
    majority: float
    versions: dict[tuple[int, int], Convention] = field(default_factory=dict)
    votes: dict[int, list[tuple[int, datetime, bool]]] = field(default_factory=dict)

    @classmethod
    def load(cls, acceptance: tuple[int, float]) -> ConventionBook:
        book = cls(max(1, int(acceptance[0])), float(acceptance[1]))
        for c in Convention.objects.select_related("round").order_by("number", "version"):
            book.versions[(c.number, c.version)] = c
        for cid, pk, at, approve in Vote.objects.order_by("pk").values_list(
            "convention_id", "pk", "created_at", "approve"
        ):
            book.votes.setdefault(cid, []).append((pk, at, approve))
        return book

    def decision(self, convention: Convention, *, vote: int | None = None, at: datetime | None = None):
        """(accepted, the deciding vote's id) by votes cast up to the id ``vote`` or the time ``at``;
        (None, None) while fewer than the quorum had voted."""
        cast = [
            v for v in self.votes.get(convention.pk, [])
            if (vote is None or v[0] <= vote) and (at is None or v[1] <= at)
        ]  # fmt: skip
        if len(cast) < self.quorum:
            return None, None
        deciding = cast[: self.quorum]
        return sum(v[2] for v in deciding) / self.quorum > self.majority, deciding[-1][0]

    def in_force(self, as_of: AsOf, round_ids: set[int]) -> list[Convention]:
        """The accepted version of each convention of these rounds by then, by number."""
        best: dict[int, tuple[int, Convention]] = {}
        for (number, _version), c in self.versions.items():
            accepted, decided = self.decision(c, vote=as_of.convention_vote)
            if accepted and (number not in best or decided > best[number][0]):
                best[number] = (decided, c)
        return [c for _decided, c in sorted(best.values(), key=lambda d: (d[1].number, d[1].version))
                if c.round_id in round_ids]  # fmt: skip


# Agreement as of then ----------------------------------------------------------------------------


def _latest_revisions(round_id: int, as_of: AsOf) -> dict[tuple[int, int], dict[str, Any]]:
    """(item, annotator) -> the slots of their newest revision in the round by then."""
    rows = (
        AnnotationRevision.objects.filter(
            annotation__assignment__round_id=round_id, annotation__assignment__control=False,
            pk__lte=as_of.annotation_revision,
        )
        .order_by("annotation_id", "version")
        .values_list("annotation__assignment__item_id", "annotation__assignment__annotator_id", "slots")
        .iterator(chunk_size=5000)
    )  # fmt: skip
    latest = {(item, coder): slots for item, coder, slots in rows}
    for item, _round, when, coder, slots in _bare(Q(assignment__round_id=round_id)):
        if as_of.at is not None and when <= as_of.at:
            latest[(item, coder)] = slots
    return latest


def _bare(where: Q) -> Iterator[tuple[int, int, datetime, int, dict[str, Any]]]:
    """Annotations with no revision at all (written in bulk, outside the services that record
    one): (item, round, last change, annotator, slots), counted from their last change on."""
    rows = (
        Annotation.objects.filter(where, assignment__control=False, revisions__isnull=True)
        .values_list("assignment__item_id", "assignment__round_id", "updated_at", "assignment__annotator_id",
                     *SLOT_FIELDS)
        .iterator(chunk_size=5000)
    )  # fmt: skip
    for item, round_, when, coder, *slots in rows:
        yield item, round_, when, coder, dict(zip(SLOT_FIELDS, slots, strict=True))


def _code(slots: dict[str, Any]) -> list[int]:
    return [LOOKUP[s].get(str(slots.get(name)), MISSING) for s, name in enumerate(SLOT_NAMES)]


def agreement_as_of(as_of: AsOf, rounds: list[Round]) -> dict[str, Any]:
    """Alpha and raw agreement per slot of each round with two or more coders, over the
    annotations as they stood then (the export's agreement summary)."""
    out = {}
    for round_ in rounds:
        latest = _latest_revisions(round_.pk, as_of)
        if not latest:
            continue
        items = sorted({i for i, _coder in latest})
        coders = sorted({c for _item, c in latest})
        if len(coders) < 2:
            continue
        row, col = {i: k for k, i in enumerate(items)}, {c: k for k, c in enumerate(coders)}
        table = np.full((len(items), len(coders), len(SLOTS)), MISSING, dtype=np.int16)
        for (item, coder), slots in latest.items():
            table[row[item], col[coder]] = _code(slots)
        report = agreement(table, bootstrap=0)

        def number(value: float | None) -> float | None:
            return None if value is None or np.isnan(value) else round(float(value), 6)

        out[round_.name] = {
            "coders": len(coders),
            "items": report.items,
            "alpha": {s.slot: number(s.alpha) for s in report.slots},
            "raw": {s.slot: number(s.raw) for s in report.slots},
        }
    return out


# Gold records as of then -------------------------------------------------------------------------


@dataclass
class Construal:
    index: int
    slots: dict[str, str | None]
    provenance: dict[str, dict[str, Any]]
    residue: str = ""
    notes: str = ""

    @property
    def complete(self) -> bool:
        return all(self.slots.get(name) is not None for name in SLOT_NAMES)


@dataclass
class GoldState:
    """One gold record as the history gives it then; ``construals`` empty when it had not been
    opened by then. ``problems`` say where the history could not be followed."""

    gold_id: int
    item_id: int
    round_id: int
    source: str
    source_id: str
    text: str
    masked: str
    reference: str
    sets: list[int] = field(default_factory=list)
    construals: list[Construal] = field(default_factory=list)
    pivotal: list[str] = field(default_factory=list)
    last_change: datetime | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.source}:{self.source_id}"

    @property
    def resolved(self) -> bool:
        return bool(self.construals) and self.construals[0].complete


def _unanimous(revisions: list[tuple[datetime, int, dict[str, Any]]], at: datetime) -> dict[str, str | None]:
    """The slots every coder gave alike (two or more coders) in their newest revision by ``at``;
    ``revisions`` holds (time, coder, slots) oldest first."""
    newest: dict[int, dict[str, Any]] = {}
    for when, coder, slots in revisions:
        if when <= at:
            newest[coder] = slots
    out: dict[str, str | None] = {}
    for name in SLOT_NAMES:
        given = [v for v in (s.get(name) for s in newest.values()) if v in SLOT_BY_NAME[name].values]
        out[name] = given[0] if len(given) >= 2 and len(set(given)) == 1 else None
    return out


def _given(before: dict[str, Any] | None, after: dict[str, Any]) -> set[str]:
    old = (before or {}).get("slots") or {}
    return {name for name in SLOT_NAMES if name in after and after[name] != old.get(name)}


def _follow(state: GoldState, trail: list[tuple], revisions: list, now: dict[int, tuple], as_of: AsOf,
            book: ConventionBook, stored_order: KeyOrder) -> None:  # fmt: skip
    """Replay the record's trail (rows up to as_of) onto ``state``. ``now``: index -> the stored
    construal's (residue, notes, provenance)."""
    resolutions = [t for t in trail if t[4] is not None and "slots" in (t[5] or {}) and not _is_rule_set(t)]
    last_resolution = resolutions[-1][0] if resolutions else None
    first: Construal | None = None
    second: Construal | None = None
    for pk, at, who, _gold, before, after, why in trail:
        if pk > as_of.gold_change:
            continue
        state.last_change = at if state.last_change is None or at > state.last_change else state.last_change
        after = after or {}
        if before is None:  # opened: the slots the annotators agreed on then
            slots = _unanimous(revisions, at)
            mark = stored_order(_UNANIMOUS_MARK)
            prov = {name: mark for name, v in slots.items() if v is not None}
            first, second, state.pivotal = Construal(1, slots, prov), None, []
            continue
        if first is None:
            state.problems.append(
                _("a change at %(at)s before the record was opened") % {"at": at.isoformat()}
            )
            continue
        if why.startswith(RULE_SET_WHY):  # re-routed: every construal is routed again under then's set
            continue
        found = _CONVENTION_WHY.match(why)
        if found:
            _apply_convention(state, first, (int(found[1]), int(found[2])), at, who, book, stored_order)
            continue
        if "slots" not in after:
            state.problems.append(
                _("a change at %(at)s that says no slots: %(why)s") % {"at": at.isoformat(), "why": why[:80]}
            )
            continue
        mark = stored_order({"source": ADJUDICATED, "by": who})
        given = _given(before, after["slots"])
        if pk == last_resolution:  # slots set to the value they had: told only by the stored marks
            stored = now.get(1, ("", "", {}))[2]
            given |= {name for name in SLOT_NAMES if stored.get(name) == mark and name in after["slots"]}
        first = Construal(
            1, {**first.slots, **{n: after["slots"][n] for n in given}},
            {**first.provenance, **{n: mark for n in given}},
        )  # fmt: skip
        other = after.get("second")
        if other:
            state.pivotal = [n for n in SLOT_NAMES if other.get(n) != after["slots"].get(n)]
            second = Construal(
                2, {**first.slots, **{n: other[n] for n in state.pivotal}},
                {**first.provenance, **{n: mark for n in state.pivotal}},
            )  # fmt: skip
        else:
            second, state.pivotal = None, []
    state.construals = [c for c in (first, second) if c is not None]
    for c in state.construals:
        c.residue, c.notes = now.get(c.index, ("", "", {}))[:2]


def _is_rule_set(change: tuple) -> bool:
    return change[6].startswith(RULE_SET_WHY)


def _apply_convention(state: GoldState, first: Construal, key: tuple[int, int], at: datetime, who: str,
                      book: ConventionBook, stored_order: KeyOrder) -> None:  # fmt: skip
    convention = book.versions.get(key)
    label = f"C{key[0]} v{key[1]}"
    if convention is None:
        state.problems.append(
            _("%(convention)s, applied at %(at)s, is not stored")
            % {"convention": label, "at": at.isoformat()}
        )
        return
    accepted, _decided = book.decision(convention, at=at)
    if not accepted:
        state.problems.append(
            _("%(convention)s was applied at %(at)s but its votes by then do not accept it")
            % {"convention": label, "at": at.isoformat()}
        )
        return
    if first.slots.get(convention.slot) is not None:
        state.problems.append(
            _("%(convention)s was applied at %(at)s to %(slot)s, which the annotators had agreed on by then")
            % {"convention": label, "at": at.isoformat(), "slot": convention.slot}
        )
        return
    mark = {"source": CONVENTION, "convention": convention.number, "version": convention.version, "by": who}
    first.slots[convention.slot] = convention.chosen
    first.provenance[convention.slot] = stored_order(mark)


def gold_states(
    as_of: AsOf, round_id: int | None, size: int, book: ConventionBook
) -> Iterator[list[GoldState]]:
    """Every gold record (of one round, or all) in item order, ``size`` at a time, as the history
    gives it as of ``as_of``: a few queries per batch (keyset paging, so memory does not grow
    with the corpus)."""
    last = 0
    order = KeyOrder()
    while True:
        golds = GoldItem.objects.filter(item_id__gt=last)
        if round_id is not None:
            golds = golds.filter(round_id=round_id)
        rows = list(
            golds.order_by("item_id").values_list(
                "pk", "item_id", "round_id", "item__source", "item__source_id", "item__text",
                "item__masked_text", "item__reference_label",
            )[:size]
        )  # fmt: skip
        if not rows:
            return
        states = [GoldState(*row) for row in rows]
        yield _rebuilt(states, as_of, book, order)
        last = states[-1].item_id


def _rebuilt(states: list[GoldState], as_of: AsOf, book: ConventionBook, order: KeyOrder) -> list[GoldState]:
    ids = [s.gold_id for s in states]
    items = [s.item_id for s in states]
    trails: dict[int, list[tuple]] = {}
    changes = GoldChange.objects.filter(gold_id__in=ids).order_by("at", "id")
    for gold_id, *rest in changes.values_list("gold_id", "pk", "at", "who__username", "gold_id", "before",
                                              "after", "why"):  # fmt: skip
        trails.setdefault(gold_id, []).append(tuple(rest))
    now: dict[int, dict[int, tuple]] = {}
    stored = GoldConstrual.objects.filter(gold_id__in=ids).values_list(
        "gold_id", "index", "residue", "notes", "provenance"
    )
    for gold_id, index, residue, notes, provenance in stored:
        now.setdefault(gold_id, {})[index] = (residue, notes, provenance or {})
        order.learn(provenance or {})
    revisions: dict[tuple[int, int], list] = {}
    rows = (
        AnnotationRevision.objects.filter(
            annotation__assignment__item_id__in=items, annotation__assignment__control=False,
            pk__lte=as_of.annotation_revision,
        )
        .order_by("annotation_id", "version")
        .values_list("annotation__assignment__item_id", "annotation__assignment__round_id", "created_at",
                     "annotation__assignment__annotator_id", "slots")
    )  # fmt: skip
    for item_id, round_id, at, coder, slots in rows:
        revisions.setdefault((item_id, round_id), []).append((at, coder, slots or {}))
    for item_id, round_id, at, coder, slots in _bare(Q(assignment__item_id__in=items)):
        revisions.setdefault((item_id, round_id), []).append((at, coder, slots))
    members = ItemSetMember.objects.filter(item_id__in=items, item_set__created_at__lte=as_of.at or NEVER)
    members = members.order_by("item_id", "item_set_id")
    sets: dict[int, list[int]] = {}
    for item_id, set_id in members.values_list("item_id", "item_set_id"):
        sets.setdefault(item_id, []).append(set_id)
    for s in states:
        s.sets = sets.get(s.item_id, [])
        trail = [(t[0], t[1], t[2] or "", t[3], t[4], t[5], t[6]) for t in trails.get(s.gold_id, [])]
        _follow(
            s, trail, revisions.get((s.item_id, s.round_id), []), now.get(s.gold_id, {}), as_of, book, order
        )
    return states
