"""Writes: rounds and their assignments, annotation submits (imports of model output: model_output)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

import nsmcore
from annotator.annotation_writes import Save, annotation_write
from annotator.events import round_completed_check
from annotator.imports import unstorable_text
from annotator.models import (
    FLAGS,
    SLOT_FIELDS,
    Annotation,
    AnnotationDraft,
    Assignment,
    ItemSet,
    Round,
)
from annotator.queries import assignments_rotate
from annotator.round_selectors import blind_pending, field_mismatch_problem, prefill_overlap, prefilled_seen
from annotator.selectors import annotation_of, prefill_of
from annotator.versions import round_changed

# Bounds of what an annotation submit accepts, the same in the workspace form, the API and here.
TEXT_MAX_CHARS = 2_000  # residue and notes each
TIME_SPENT_MAX_MS = 86_400_000  # one day: more is a clock or client fault, not work
VERSION_MAX = 2_147_483_647  # the largest version the column holds


class RoundError(ValueError):
    """A refused round change; ``field`` names the input at fault (for forms), ``taken`` says the
    name is another round's."""

    def __init__(self, message: str, *, field: str = "", taken: bool = False):
        self.field = field
        self.taken = taken
        super().__init__(message)

    @property
    def api_status(self) -> int:
        """409 for what conflicts with what exists (a taken name, prefill overlap), else 400."""
        return 409 if self.field == "name" and self.taken else 400

    def api_body(self) -> dict[str, Any]:
        if self.api_status == 409:
            return {"detail": str(self), self.field: [str(self)]}
        return {self.field: [str(self)]} if self.field else {"detail": str(self)}


class RoundOverlap(RoundError):
    """A round that would mix the blind control arm with prefill: a blind round over items its
    annotators already saw prefilled, or (``mode`` prefilled) a prefilled round over items they
    still have to do blind. ``counts`` maps username -> how many."""

    api_status = 409

    def api_body(self) -> dict[str, Any]:
        return {"detail": str(self), "allow_prefill_overlap": [str(self)], "overlap": self.counts}

    def __init__(self, counts: dict[str, int], *, mode: str = Round.Mode.BLIND):
        self.counts, self.mode = counts, mode
        detail = ", ".join(f"{name} {n}" for name, n in counts.items())
        if mode == Round.Mode.BLIND:
            message = _(
                "a blind round is the control for anchoring, but its annotators saw items of this set "
                "prefilled: %(counts)s. Choose other items or annotators, or confirm to create it anyway"
            )
        else:
            message = _(
                "a prefilled round would show the parser's explications of items its annotators have "
                "still to annotate blind, in the control for anchoring: %(counts)s. Choose other items "
                "or annotators, or confirm to create it anyway"
            )
        super().__init__(message % {"counts": detail}, field="confirm_overlap")


class AnnotationInvalid(ValueError):
    """The submitted values are not a legal explication; ``errors`` maps field -> message."""

    api_status = 400

    def api_body(self) -> dict[str, Any]:
        return self.errors

    def __init__(self, errors: dict[str, dict[str, Any]]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v['message']}" for k, v in errors.items()))


class StaleSave(Exception):
    """The annotation changed since the form was loaded (another tab or window saved it), or the
    save names a version that was never saved (``current`` is then None)."""

    api_status = 409

    def api_body(self) -> dict[str, Any]:
        return {"detail": str(self), "current_version": self.current.version if self.current else 0}

    def __init__(self, current: Annotation | None, *, base_version: int = 0):
        self.current = current
        if current is None:
            message = _(
                "this annotation has no saved version, but the save says it was loaded at version "
                "%(version)s; reload the item. Your values were not saved."
            ) % {"version": base_version}
        else:
            message = _(
                "this annotation was saved elsewhere (now version %(version)s, at %(at)s); reload to "
                "see it. Your values were not saved."
            ) % {"version": current.version, "at": f"{timezone.localtime(current.updated_at):%H:%M:%S}"}
        super().__init__(message)


@transaction.atomic
def round_create(
    *,
    name: str,
    item_set: ItemSet,
    annotators: Sequence[AbstractBaseUser],
    mode: str = Round.Mode.BLIND,
    text_field: str = Round.TEXT_MASKED,
    annotators_per_item: int = 2,
    pass_kind: str = Round.PassKind.HUMAN,
    show_routed_label: bool = False,
    prefill_parser: str = "",
    allow_prefill_overlap: bool = False,
) -> Round:
    """A round and its assignments: each item to ``annotators_per_item`` annotators of the pool,
    rotating through the pool so that the work is balanced. A blind round whose annotators saw
    some of its items prefilled is refused (RoundOverlap) unless ``allow_prefill_overlap``."""
    if not name.strip():
        raise RoundError(_("a round needs a name"), field="name")
    if not name.isprintable():
        raise RoundError(
            _("round name %(name)s: no control characters (newline, tab)") % {"name": repr(name)},
            field="name",
        )
    if Round.objects.filter(name=name).exists():
        raise RoundError(_round_taken(name), field="name", taken=True)
    if annotators_per_item < 1:
        raise RoundError(_("each item needs at least one annotator"), field="annotators_per_item")
    # A silver round may start with no pool: imported passes bring their own annotators.
    pass_only = pass_kind == Round.PassKind.SILVER and not annotators
    if len(annotators) < annotators_per_item and not pass_only:
        raise RoundError(
            _("%(per_item)s annotators per item but the pool has %(pool)s")
            % {"per_item": annotators_per_item, "pool": len(annotators)},
            field="annotators",
        )
    if len({a.pk for a in annotators}) != len(annotators):
        raise RoundError(_("an annotator is named twice in the pool"), field="annotators")
    if mode == Round.Mode.PREFILLED and not prefill_parser:
        raise RoundError(
            _("a prefilled round needs the name of the parser whose predictions prefill it"),
            field="prefill_parser",
        )
    if mode == Round.Mode.PREFILLED:
        problem = field_mismatch_problem(item_set, prefill_parser, text_field)
        if problem:
            raise RoundError(problem, field="prefill_parser")
    if not allow_prefill_overlap:  # the blind control arm kept apart from prefill, both ways
        seen = prefill_overlap if mode == Round.Mode.BLIND else blind_pending
        overlap = seen(item_set=item_set, annotators=annotators)
        if overlap:
            raise RoundOverlap(overlap, mode=mode)
    try:
        with transaction.atomic():  # a savepoint: another request may take the name meanwhile
            round_ = Round.objects.create(
                name=name,
                item_set=item_set,
                mode=mode,
                text_field=text_field,
                annotators_per_item=annotators_per_item,
                pass_kind=pass_kind,
                show_routed_label=show_routed_label,
                prefill_parser=prefill_parser if mode == Round.Mode.PREFILLED else "",
            )
    except IntegrityError:
        if Round.objects.filter(name=name).exists():
            raise RoundError(_round_taken(name), field="name", taken=True) from None
        raise
    round_.pool.set(annotators)
    # In turn through the pool: the i-th item to the annotators at places (i * k + j) % n, so
    # every annotator gets the same share and queue positions count up without gaps.
    assignments_rotate(
        round_id=round_.pk,
        item_set_id=item_set.pk,
        annotator_ids=[a.pk for a in annotators],
        per_item=annotators_per_item,
    )
    return round_


def _round_taken(name: str) -> str:
    return _("a round named %(name)s already exists") % {"name": repr(name)}


@dataclass(frozen=True)
class PoolChange:
    """What a pool change did: assignments moved between annotators, items left short of
    annotators (nobody eligible could take them), who received how many and who gave how many
    (an added annotator receives from the others; a removed one gives to them)."""

    moved: int
    uncovered: int
    received: dict[str, int]
    given: dict[str, int]
    why_none: str = ""  # why an added annotator received nothing
    added: bool = False  # an annotator joined (received from the others), else one left (gave to them)

    def summary(self) -> str:
        text = _("%(n)s pending assignments moved") % {"n": self.moved}
        if not self.moved and self.why_none:
            text += f": {self.why_none}"
        # the others of the pool: whom the newcomer received from, or whom the leaver gave to
        others = self.given if self.added else self.received
        if self.moved and others:
            names = ", ".join(f"{name} {n}" for name, n in sorted(others.items()))
            way = _("from %(names)s") if self.added else _("to %(names)s")
            text += " (" + way % {"names": names} + ")"
        if self.uncovered:
            text += "; " + _(
                "%(n)s items now have fewer annotators: nobody else eligible could take them"
            ) % {"n": self.uncovered}
        return text


def _next_positions(round_: Round) -> dict[int, int]:
    rows = Assignment.objects.filter(round=round_).values_list("annotator_id", "position")
    last: dict[int, int] = {}
    for annotator_id, position in rows:
        last[annotator_id] = max(last.get(annotator_id, -1), position)
    return {annotator_id: position + 1 for annotator_id, position in last.items()}


@transaction.atomic
def round_annotator_remove(*, round_: Round, annotator: AbstractBaseUser) -> PoolChange:
    """Take an annotator out of a round's pool. Their done and skipped work is kept; each pending
    assignment goes to the pool member with the least pending work who does not already have
    that item in the round (in a blind round, nor saw it prefilled). An item nobody can take is
    left with fewer annotators, and counted."""
    round_ = Round.objects.select_for_update().get(pk=round_.pk)
    if not round_.pool.filter(pk=annotator.pk).exists():
        raise RoundError(
            _("%(user)s is not in the pool of %(round)s")
            % {"user": annotator.get_username(), "round": round_.name},
            field="annotator",
        )
    round_.pool.remove(annotator)
    others = {u.pk: u.get_username() for u in round_.pool.all()}
    pending = list(
        Assignment.objects.filter(
            round=round_, annotator=annotator, status=Assignment.Status.PENDING
        ).order_by("position")
    )
    item_ids = [a.item_id for a in pending]
    holders = set(
        Assignment.objects.filter(round=round_, item_id__in=item_ids).values_list("annotator_id", "item_id")
    )
    seen = prefilled_seen(annotator_ids=others, item_ids=item_ids) if round_.is_blind else set()
    load = Counter(
        dict(
            Assignment.objects.filter(round=round_, annotator_id__in=others, status=Assignment.Status.PENDING)
            .values_list("annotator_id")
            .annotate(n=Count("pk"))
            .values_list("annotator_id", "n")
        )
    )
    positions = _next_positions(round_)
    received: Counter[str] = Counter()
    uncovered = []
    for assignment in pending:
        eligible = [
            pk
            for pk in others
            if (pk, assignment.item_id) not in holders and (pk, assignment.item_id) not in seen
        ]
        if not eligible:
            uncovered.append(assignment.pk)
            continue
        to = min(eligible, key=lambda pk: (load[pk], others[pk]))
        Assignment.objects.filter(pk=assignment.pk).update(annotator_id=to, position=positions.get(to, 0))
        positions[to] = positions.get(to, 0) + 1
        load[to] += 1
        holders.add((to, assignment.item_id))
        received[others[to]] += 1
    Assignment.objects.filter(pk__in=uncovered).delete()
    round_changed(round_.pk)
    moved = sum(received.values())
    given = {annotator.get_username(): moved} if moved else {}
    return PoolChange(moved, len(uncovered), dict(received), given)


@transaction.atomic
def round_annotator_add(*, round_: Round, annotator: AbstractBaseUser) -> PoolChange:
    """Add an annotator to a round's pool and hand them a fair share of the pending work: a
    pool-size share of all pending assignments, taken one at a time from whoever has the most
    pending, never an item they already have in the round (nor, in a blind round, one they saw
    prefilled). Done work stays with whoever did it."""
    round_ = Round.objects.select_for_update().get(pk=round_.pk)
    if round_.pool.filter(pk=annotator.pk).exists():
        raise RoundError(
            _("%(user)s is already in the pool of %(round)s")
            % {"user": annotator.get_username(), "round": round_.name},
            field="annotator",
        )
    round_.pool.add(annotator)
    pool = {u.pk: u.get_username() for u in round_.pool.all()}
    pending = list(
        Assignment.objects.filter(round=round_, status=Assignment.Status.PENDING)
        .exclude(annotator=annotator)
        .order_by("-position", "-pk")  # the end of each queue first: work not yet begun
    )
    share = len(pending) // len(pool)
    held = set(Assignment.objects.filter(round=round_, annotator=annotator).values_list("item_id", flat=True))
    have = set(held)
    if round_.is_blind:
        have |= {
            i for _, i in prefilled_seen(annotator_ids=[annotator.pk], item_ids=[a.item_id for a in pending])
        }
    queues: dict[int, list[Assignment]] = {}
    for assignment in pending:
        queues.setdefault(assignment.annotator_id, []).append(assignment)
    position = _next_positions(round_).get(annotator.pk, 0)
    given: Counter[str] = Counter()
    moved = 0
    while moved < share:
        # whoever has the most pending work gives the last eligible item of their queue
        donors = sorted(queues, key=lambda pk: (-len(queues[pk]), pool.get(pk, "")))
        taken = None
        for donor in donors:
            taken = next((a for a in queues[donor] if a.item_id not in have), None)
            if taken is not None:
                queues[donor].remove(taken)
                given[pool.get(donor, str(donor))] += 1
                break
        if taken is None:
            break  # nothing left the newcomer may take
        Assignment.objects.filter(pk=taken.pk).update(annotator=annotator, position=position)
        position += 1
        have.add(taken.item_id)
        moved += 1
    round_changed(round_.pk)
    why_none = "" if moved else _why_no_work(annotator, pending, share, len(pool), held, have - held)
    received = {annotator.get_username(): moved} if moved else {}
    return PoolChange(moved, 0, received, dict(given), why_none, added=True)


def _why_no_work(
    annotator: AbstractBaseUser, pending: list[Assignment], share: int, pool_size: int,
    held: set[int], seen: set[int],
) -> str:  # fmt: skip
    """Why an annotator added to a pool received no pending assignment."""
    if not pending:
        return _("the round has no pending work")
    if not share:
        n = len(pending)
        return ngettext(
            "%(n)s pending assignment among a pool of %(pool)s makes less than one each",
            "%(n)s pending assignments among a pool of %(pool)s make less than one each",
            n,
        ) % {"n": n, "pool": pool_size}
    name = {"user": annotator.get_username()}
    items = {a.item_id for a in pending}
    if items <= seen - held:
        return _("%(user)s saw every pending item prefilled") % name
    if items <= held:
        return _("%(user)s already has every pending item in this round") % name
    return _("%(user)s already has, or saw prefilled, every pending item") % name


def text_problem(value: Any) -> str:
    """Why a residue or notes value cannot be stored ("" when it can): not a string, a NUL
    (PostgreSQL refuses it), a lone surrogate (not encodable as UTF-8), or over TEXT_MAX_CHARS."""
    if not isinstance(value, str):
        return _("must be a string, not %(type)s") % {"type": type(value).__name__}
    if problem := unstorable_text(value):
        return problem
    if len(value) > TEXT_MAX_CHARS:
        return _("at most %(max)s characters (it has %(n)s)") % {
            "max": f"{TEXT_MAX_CHARS:,}",
            "n": f"{len(value):,}",
        }
    return ""


def whole_number_problem(value: Any, low: int, high: int) -> str:
    """Why ``value`` is not a whole number in [low, high] ("" when it is). Booleans are not
    numbers, whatever Python says."""
    if isinstance(value, bool) or not isinstance(value, int):
        shown = ascii(value[:40]) if isinstance(value, str) else type(value).__name__
        return _("must be a whole number, not %(value)s") % {"value": shown}
    if not low <= value <= high:
        return _("must be between %(low)s and %(high)s") % {"low": f"{low:,}", "high": f"{high:,}"}
    return ""


def validate_annotation(values: dict[str, Any]) -> tuple[nsmcore.Explication, list[str]]:
    # An absent or empty slot is reported as missing (with its allowed values), not as a bad value.
    obj = {name: values[name] for name in SLOT_FIELDS if values.get(name) not in (None, "")}
    errors: dict[str, dict[str, Any]] = {}
    for name in ("residue", "notes"):
        obj[name] = values.get(name) or ""
        problem = text_problem(obj[name])
        if problem:
            errors[name] = {"message": problem}
            obj[name] = ""  # reported; let nsmcore check the slots
    explication, problems = nsmcore.check(obj)
    for problem in problems:
        errors.setdefault(problem.slot, {"message": problem.message, "allowed": list(problem.allowed)})
    flags = values.get("flags") or []
    if isinstance(flags, str):
        flags = [flags]
    if not isinstance(flags, list):
        flags = [flags]
    bad = [f for f in flags if f not in FLAGS]
    if bad:
        named = {"flags": ascii(bad[:10]), "allowed": ", ".join(FLAGS), "more": f"{len(bad) - 10:,}"}
        if len(bad) > 10:  # named, not echoed whole
            message = _("unknown flags %(flags)s and %(more)s more; allowed: %(allowed)s") % named
        else:
            message = _("unknown flags %(flags)s; allowed: %(allowed)s") % named
        errors["flags"] = {
            "message": message,
            "allowed": list(FLAGS),
        }
    if errors or explication is None:
        raise AnnotationInvalid(errors)
    return explication, sorted(set(flags), key=FLAGS.index)


def annotation_submit(
    *,
    assignment: Assignment,
    user: AbstractBaseUser,
    values: dict[str, Any],
    base_version: int,
    time_spent_ms: int = 0,
) -> Annotation:
    """Save an annotator's slots as a new revision; a submit of a done item that changes nothing
    writes nothing and returns the annotation as it is (``changed`` False). ``base_version`` is
    the version the form was loaded at (0 for a first save); if the annotation has moved on
    since, or another first save won the race, StaleSave is raised and nothing is written. Bad
    values, numbers out of range (``time_spent_ms`` 0 to TIME_SPENT_MAX_MS) and texts over
    TEXT_MAX_CHARS raise AnnotationInvalid naming each field.

    The reads come with the assignment when it is ``assignment_for_user``'s (its annotation and
    prefill); the writes are made together or not at all (annotator.annotation_writes): the claim
    (insert or conditional update), the revision and the status."""
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator can submit this annotation")
    numbers = {
        "base_version": whole_number_problem(base_version, 0, VERSION_MAX),
        "time_spent_ms": whole_number_problem(time_spent_ms, 0, TIME_SPENT_MAX_MS),
    }
    errors = {name: {"message": problem} for name, problem in numbers.items() if problem}
    try:
        explication, flags = validate_annotation(values)
    except AnnotationInvalid as invalid:
        raise AnnotationInvalid({**invalid.errors, **errors}) from None
    if errors:
        raise AnnotationInvalid(errors)
    slots = explication.slots()
    prefill = prefill_of(assignment)
    kept = [s for s in SLOT_FIELDS if prefill and prefill.get(s) == slots[s]]
    fields = {
        **slots,
        "residue": explication.residue,
        "notes": explication.notes,
        "flags": flags,
        "prefill": prefill,
        "kept_prefill": kept,
        "time_spent_ms": time_spent_ms,
    }
    annotation = annotation_of(assignment)
    if (
        annotation is not None
        and base_version == annotation.version
        and _unchanged(annotation, fields)
        and (  # the status read only here: what the caller holds may be older
            assignment.status == Assignment.Status.DONE
            or Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.DONE).exists()
        )
    ):
        # Enter on a done item, unchanged: no revision, no new version of the round's work (which
        # would mark its gold record for review)
        AnnotationDraft.objects.filter(assignment_id=assignment.pk).delete()
        annotation.changed = False
        return annotation
    if annotation is None and base_version != 0:
        annotation = _fresh(assignment)  # saved since the assignment was read?
        if annotation is None:
            raise StaleSave(None, base_version=base_version)
    saved = annotation_write(Save(assignment, annotation, base_version, fields, user))
    if saved is None:
        raise StaleSave(_fresh(assignment))
    annotation = saved
    round_changed(assignment.round_id)
    round_completed_check(assignment=assignment)  # webhooks: round.completed when none is left
    assignment.status = Assignment.Status.DONE
    annotation.changed = True
    return annotation


def _unchanged(annotation: Annotation, fields: dict[str, Any]) -> bool:
    """Whether saving ``fields`` would change what the annotation holds (its time spent aside)."""
    compared = (*SLOT_FIELDS, "residue", "notes", "flags")
    return all(getattr(annotation, name) == fields[name] for name in compared)


def draft_save(
    *, assignment: Assignment, user: AbstractBaseUser, values: dict[str, Any], base_version: int
) -> AnnotationDraft:
    """Keep what the annotator has chosen and not saved (the page sends it as they work): one row
    per assignment, replaced each time, removed by a discard. A save needs no write of its own to
    retire it: the draft names the version it was made on, and once a later one is saved it is no
    longer offered (selectors.draft_to_restore)."""
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator keeps a draft of this annotation")
    draft, _ = AnnotationDraft.objects.update_or_create(
        assignment_id=assignment.pk, defaults={"values": values, "base_version": base_version}
    )
    return draft


def draft_discard(*, assignment: Assignment, user: AbstractBaseUser) -> None:
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator discards a draft of this annotation")
    AnnotationDraft.objects.filter(assignment_id=assignment.pk).delete()


def _fresh(assignment: Assignment) -> Annotation | None:
    """The annotation as it is now (after a refused save), or None when it has none."""
    return Annotation.objects.filter(assignment=assignment).first()


def assignment_unskip(*, assignment: Assignment, user: AbstractBaseUser) -> bool:
    """Take a skip back: the item is to do again. False when it was not skipped (nothing done)."""
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator can take back a skip of this item")
    taken = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.SKIPPED).update(
        status=Assignment.Status.PENDING
    )
    if taken:
        assignment.status = Assignment.Status.PENDING
        round_changed(assignment.round_id)  # the item is no longer complete for gold
    return bool(taken)


def assignment_skip(*, assignment: Assignment, user: AbstractBaseUser) -> None:
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator can skip this item")
    if assignment.status == Assignment.Status.PENDING:
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SKIPPED)
        assignment.status = Assignment.Status.SKIPPED
        round_changed(assignment.round_id)  # the item may now be complete for gold
