"""Imports of model output: a parser's predictions, and a model's pass over a round as if it were
an annotator's (silver passes), each from JSONL and all or nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

import nsmcore
from annotator.imports import ImportFileError, ImportProblem, read_jsonl
from annotator.models import Annotation, AnnotationRevision, Assignment, Item, ParserPrediction, Round
from annotator.services import AnnotationInvalid, validate_annotation
from annotator.versions import round_changed


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
            explication, flags = validate_annotation(values)
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
