"""Writes: rounds and their assignments, annotation submits, imported predictions and passes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, User
from django.db import transaction
from django.db.models import F
from django.utils import timezone

import nsmcore
from annotator.imports import ImportFileError, ImportProblem, read_jsonl
from annotator.models import (
    FLAGS,
    SLOT_FIELDS,
    Annotation,
    AnnotationRevision,
    Assignment,
    Item,
    ItemSet,
    ParserPrediction,
    Round,
)
from annotator.selectors import prefill_for
from annotator.versions import round_changed


class RoundError(ValueError):
    pass


class AnnotationInvalid(ValueError):
    """The submitted values are not a legal explication; ``errors`` maps field -> message."""

    def __init__(self, errors: dict[str, dict[str, Any]]):
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v['message']}" for k, v in errors.items()))


class StaleSave(Exception):
    """The annotation changed since the form was loaded (another tab or window saved it)."""

    def __init__(self, current: Annotation):
        self.current = current
        super().__init__(
            f"this annotation was saved elsewhere (now version {current.version}, "
            f"at {timezone.localtime(current.updated_at):%H:%M:%S}); reload to see it. "
            "Your values were not saved."
        )


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
) -> Round:
    """A round and its assignments: each item to ``annotators_per_item`` annotators of the pool,
    rotating through the pool so that the work is balanced."""
    if Round.objects.filter(name=name).exists():
        raise RoundError(f"a round named {name!r} already exists")
    if annotators_per_item < 1:
        raise RoundError("each item needs at least one annotator")
    # A silver round may start with no pool: imported passes bring their own annotators.
    pass_only = pass_kind == Round.PassKind.SILVER and not annotators
    if len(annotators) < annotators_per_item and not pass_only:
        raise RoundError(f"{annotators_per_item} annotators per item but the pool has {len(annotators)}")
    if mode == Round.Mode.PREFILLED and not prefill_parser:
        raise RoundError("a prefilled round needs the name of the parser whose predictions prefill it")
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
    round_.pool.set(annotators)
    item_ids = list(item_set.members.order_by("position").values_list("item_id", flat=True))
    n = len(annotators)
    positions = [0] * n
    assignments = []
    for i, item_id in enumerate(item_ids if n else []):
        for j in range(annotators_per_item):
            a = (i * annotators_per_item + j) % n
            assignments.append(
                Assignment(round=round_, item_id=item_id, annotator=annotators[a], position=positions[a])
            )
            positions[a] += 1
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    return round_


def _validate(values: dict[str, Any]) -> tuple[nsmcore.Explication, list[str]]:
    # An absent or empty slot is reported as missing (with its allowed values), not as a bad value.
    obj = {name: values[name] for name in SLOT_FIELDS if values.get(name) not in (None, "")}
    obj["residue"] = values.get("residue") or ""
    obj["notes"] = values.get("notes") or ""
    errors: dict[str, dict[str, Any]] = {}
    explication, problems = nsmcore.check(obj)
    for problem in problems:
        errors[problem.slot] = {"message": problem.message, "allowed": list(problem.allowed)}
    flags = values.get("flags") or []
    if isinstance(flags, str):
        flags = [flags]
    bad = [f for f in flags if f not in FLAGS]
    if bad:
        errors["flags"] = {
            "message": f"unknown flags {bad}; allowed: {', '.join(FLAGS)}",
            "allowed": list(FLAGS),
        }
    if errors or explication is None:
        raise AnnotationInvalid(errors)
    return explication, sorted(set(flags), key=FLAGS.index)


@transaction.atomic
def annotation_submit(
    *,
    assignment: Assignment,
    user: AbstractBaseUser,
    values: dict[str, Any],
    base_version: int,
    time_spent_ms: int = 0,
) -> Annotation:
    """Save an annotator's slots as a new revision. ``base_version`` is the version the form was
    loaded at (0 for a first save); if the annotation has moved on since, StaleSave is raised
    and nothing is written."""
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator can submit this annotation")
    explication, flags = _validate(values)
    slots = explication.slots()
    prefill = prefill_for(assignment.round, assignment.item)
    kept = [s for s in SLOT_FIELDS if prefill and prefill.get(s) == slots[s]]
    fields = {
        **slots,
        "residue": explication.residue,
        "notes": explication.notes,
        "flags": flags,
        "prefill": prefill,
        "kept_prefill": kept,
        "time_spent_ms": max(0, int(time_spent_ms)),
    }
    annotation = Annotation.objects.filter(assignment=assignment).first()
    if annotation is None:
        if base_version != 0:
            raise StaleSave(_fresh(assignment))
        annotation = Annotation.objects.create(assignment=assignment, version=1, **fields)
    else:
        # A conditional update claims the save: of two racing tabs, exactly one matches.
        claimed = Annotation.objects.filter(pk=annotation.pk, version=base_version).update(
            version=F("version") + 1, updated_at=timezone.now(), **fields
        )
        if not claimed:
            raise StaleSave(_fresh(assignment))
        annotation.refresh_from_db()
    AnnotationRevision.objects.create(
        annotation=annotation,
        version=annotation.version,
        slots=slots,
        residue=explication.residue,
        notes=explication.notes,
        flags=flags,
        kept_prefill=kept,
        time_spent_ms=fields["time_spent_ms"],
        created_by=user,
    )
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DONE)
    assignment.status = Assignment.Status.DONE
    round_changed(assignment.round_id)
    return annotation


def _fresh(assignment: Assignment) -> Annotation:
    return Annotation.objects.get(assignment=assignment)


def assignment_skip(*, assignment: Assignment, user: AbstractBaseUser) -> None:
    if assignment.annotator_id != user.pk:
        raise PermissionError("only the assigned annotator can skip this item")
    if assignment.status == Assignment.Status.PENDING:
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SKIPPED)
        assignment.status = Assignment.Status.SKIPPED
        round_changed(assignment.round_id)  # the item may now be complete for gold


# Imports of model output -------------------------------------------------------------------------


@dataclass
class PassReport:
    rows: int
    created: int
    unchanged: int

    def summary(self) -> str:
        return f"{self.rows} rows: {self.created} created, {self.unchanged} already present"


def _items_by_source_id(rows: list[tuple[int, dict[str, Any]]], source: str) -> dict[str, Item]:
    ids = [str(obj.get("text_id", obj.get("id", ""))) for _, obj in rows]
    items = {i.source_id: i for i in Item.objects.filter(source=source, source_id__in=ids)}
    missing = [
        ImportProblem(number, "text_id", f"no item {sid!r} in {source}; import the items first")
        for (number, _), sid in zip(rows, ids, strict=True)
        if sid not in items
    ]
    if missing:
        raise ImportFileError(missing)
    return items


@transaction.atomic
def predictions_import(
    *, data: bytes | str, parser: str, parser_version: str = "", source: str = "crowd-enVent"
) -> PassReport:
    """Parser predictions from JSONL (``text_id`` plus the twelve slots, or ``explication`` and
    ``raw_output``). Illegal explications are stored as illegal, with their errors."""
    rows = read_jsonl(data)
    items = _items_by_source_id(rows, source)
    existing = set(
        ParserPrediction.objects.filter(
            parser=parser, parser_version=parser_version, item__in=items.values()
        ).values_list("item_id", flat=True)
    )
    new = []
    for _, obj in rows:
        item = items[str(obj.get("text_id", obj.get("id")))]
        if item.pk in existing:
            continue
        existing.add(item.pk)
        explication = obj.get("explication")
        if explication is None:
            explication = {k: v for k, v in obj.items() if k not in ("text_id", "id", "raw_output", "flags")}
        parsed, problems = nsmcore.check(explication)
        new.append(
            ParserPrediction(
                item=item,
                parser=parser,
                parser_version=parser_version,
                explication=parsed.as_dict() if parsed else explication,
                legal=not problems,
                errors=[p.as_dict() for p in problems],
                raw_output=obj.get("raw_output") or json.dumps(explication),
            )
        )
    ParserPrediction.objects.bulk_create(new)
    return PassReport(len(rows), len(new), len(rows) - len(new))


@transaction.atomic
def pass_import(
    *, data: bytes | str, round_: Round, annotator_name: str, source: str = "crowd-enVent"
) -> PassReport:
    """A whole pass of annotations (JSONL: ``text_id``, the twelve slots, residue, notes, flags)
    as one external or model annotator's work in a round. The annotator is an account that
    cannot log in. Every row must be legal and its item in the round's item set, or nothing is
    written."""
    rows = read_jsonl(data)
    items = _items_by_source_id(rows, source)
    in_set = set(round_.item_set.members.values_list("item_id", flat=True))
    problems = []
    parsed = []
    for number, obj in rows:
        item = items[str(obj.get("text_id", obj.get("id")))]
        if item.pk not in in_set:
            problems.append(
                ImportProblem(number, "text_id", f"item {item.source_id!r} is not in round {round_.name}")
            )
            continue
        values = {k: v for k, v in obj.items() if k not in ("text_id", "id")}
        try:
            explication, flags = _validate(values)
        except AnnotationInvalid as error:
            problems += [ImportProblem(number, k, v["message"]) for k, v in error.errors.items()]
            continue
        parsed.append((item, explication, flags))
    if problems:
        raise ImportFileError(problems)
    annotator, created = User.objects.get_or_create(username=annotator_name)
    if created:
        annotator.set_unusable_password()
        annotator.save()
    round_.pool.add(annotator)
    done = set(
        Annotation.objects.filter(assignment__round=round_, assignment__annotator=annotator).values_list(
            "assignment__item_id", flat=True
        )
    )
    start = Assignment.objects.filter(round=round_, annotator=annotator).count()
    created_count = 0
    for offset, (item, explication, flags) in enumerate(parsed):
        if item.pk in done:
            continue
        assignment, _ = Assignment.objects.get_or_create(
            round=round_,
            item=item,
            annotator=annotator,
            defaults={"position": start + offset, "status": Assignment.Status.DONE},
        )
        annotation = Annotation.objects.create(
            assignment=assignment,
            version=1,
            residue=explication.residue,
            notes=explication.notes,
            flags=flags,
            **explication.slots(),
        )
        AnnotationRevision.objects.create(
            annotation=annotation,
            version=1,
            slots=explication.slots(),
            residue=explication.residue,
            notes=explication.notes,
            flags=flags,
        )
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.DONE)
        created_count += 1
    round_changed(round_.pk)
    return PassReport(len(rows), created_count, len(rows) - created_count)
