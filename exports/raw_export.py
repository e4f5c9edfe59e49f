"""The raw-annotation export job: every revision of every annotator's work in one round, one JSONL
object or CSV row each, for teams that run their own analyses (agreement by hand, time studies,
how much of the prefill annotators kept) instead of reading only the gold.

A row holds the round, the item (id, source, source id), the annotator and assignment, the
revision's number, its twelve slot values, residue, notes and flags, the label and abstention the
active rule set routes it to, whether the item was prefilled (the parser's name and version, its
values, and which slots this revision left at them or changed), the time spent, and when the
annotation was first saved and this revision submitted.

Revisions are read in chunks (``iterator``) in a fixed order (item, annotator, revision), routed a
chunk at a time, and written as they come: memory does not grow with the round. The file is
written under a hidden temporary name in NSM_EXPORT_DIR and renamed into place when complete; its
history row (``Export``, kind raw) is written then. See docs/export.md."""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, TextField
from django.db.models.functions import Cast
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import nsmcore
from annotator.csv_cells import csv_writer
from annotator.events import event_send
from annotator.models import SLOT_FIELDS, AnnotationRevision, Assignment, ParserPrediction, Round
from exports.export import _slug, export_result_path
from exports.models import Export
from exports.records import Encodings
from jobs.kinds import JobError, JobKind, Params, job_kind_register
from jobs.models import Job
from jobs.services import job_create, job_stopped
from nsmcore.emoexpl import TEMP_PREFIX, remove_partials
from rules.rulesets import active_rule_set

RAW_EXPORT = "rawexport"
FORMATS = ("jsonl", "csv")
#: revisions read, routed and written at a time
CHUNK = 2000

#: the columns of a CSV row, in order; a JSONL object has the same keys, with the lists and the
#: prefill as JSON values instead of text
COLUMNS: tuple[str, ...] = (
    "round", "item_id", "source", "source_id", "annotator", "assignment", "assignment_status",
    "revision", "latest", *SLOT_FIELDS, "residue", "notes", "flags", "label", "abstention",
    "rule_set_version", "prefilled", "prefill_parser", "prefill_parser_version", "prefill",
    "kept_prefill", "changed_from_prefill", "time_spent_ms", "created_at", "submitted_at",
)  # fmt: skip
#: columns whose values are lists or objects: JSON text in a CSV cell
JSON_COLUMNS = ("flags", "prefill", "kept_prefill", "changed_from_prefill")


@dataclass(frozen=True)
class RawExportParams(Params):
    #: "jsonl" (one JSON object per line) or "csv" (a header row, one column per slot)
    format: str = "jsonl"

    def validate(self) -> None:
        if self.format not in FORMATS:
            self.bad(
                "format",
                _("unknown format %(format)s; formats: %(formats)s")
                % {"format": repr(self.format), "formats": ", ".join(FORMATS)},
            )


def raw_export_start(*, user, round_: Round | None, format: str = "jsonl", enqueue: bool = True) -> Job:
    """Create a raw-annotation export job for one round. A round with no submission yet is not
    refused: its file holds the header (CSV) or nothing (JSONL), which is the truth."""
    if round_ is None:
        raise JobError(
            _("%(kind)s job parameter 'round': choose the round whose annotations are exported")
            % {"kind": RAW_EXPORT}
        )
    params = RawExportParams(format=format)
    return job_create(
        RAW_EXPORT, user=user, item_set=None, round_=round_, key=f"raw|{params.format}",
        params=params, enqueue=enqueue,
    )  # fmt: skip


_FIELDS = (
    "annotation_id", "version", "slots_text", "residue", "notes", "flags_text", "kept_text", "time_spent_ms",
    "created_at", "annotation__version", "prefill_text", "annotation__assignment_id",
    "annotation__assignment__status", "annotation__assignment__item_id",
    "annotation__assignment__item__source", "annotation__assignment__item__source_id",
    "annotation__assignment__annotator__username",
)  # fmt: skip


def revisions_of(round_: Round):
    """Every revision of the round's annotations, item by item, annotator by annotator, oldest
    revision first, as value tuples (``_FIELDS``). The JSON fields come as their text: the
    export decodes (and routes) each distinct text once, since revisions repeat them."""
    return (
        AnnotationRevision.objects.filter(
            annotation__assignment__round=round_, annotation__assignment__control=False
        )
        .annotate(
            slots_text=Cast("slots", TextField()),
            flags_text=Cast("flags", TextField()),
            kept_text=Cast("kept_prefill", TextField()),
            prefill_text=Cast("annotation__prefill", TextField()),
        )
        .order_by("annotation__assignment__item_id", "annotation__assignment__annotator_id", "version")
        .values_list(*_FIELDS)
    )


def _item_batches(round_: Round, rows: int) -> Iterator[list[tuple]]:
    """The round's revisions (``revisions_of``, in its order), read a range of items at a time,
    about ``rows`` revisions each (two annotators an item, a revision or so each). Each read
    ends before the export writes its progress: on SQLite a write from a connection whose cursor
    is still open on an older snapshot fails at once ("database is locked") once another
    connection, the job's heartbeat, has written since; an item's revisions all come in one read."""
    assignments = Assignment.objects.filter(round=round_).order_by("item_id")
    items = list(assignments.values_list("item_id", flat=True).distinct())
    step = max(1, rows // 2)
    for start in range(0, len(items), step):
        low, high = items[start], items[min(start + step, len(items)) - 1]
        chunk = list(revisions_of(round_).filter(annotation__assignment__item__id__range=(low, high)))
        if chunk:
            yield chunk


def _parser_versions(round_: Round, wanted: set[tuple[int, str]]) -> dict[tuple[int, str], str]:
    """(item id, the prefill as canonical JSON) -> the version of the round's parser that
    predicted it, for the prefilled revisions of a chunk (one query). The annotation keeps the
    values it was shown, not the prediction's row; the version is that of the newest legal
    prediction with those values."""
    if not wanted or not round_.prefill_parser:
        return {}
    predictions = ParserPrediction.objects.filter(
        item_id__in={item for item, _ in wanted}, parser=round_.prefill_parser, legal=True
    ).order_by("created_at")
    found = {}
    for item_id, version, explication in predictions.values_list("item_id", "parser_version", "explication"):
        key = (item_id, json.dumps(explication, sort_keys=True))
        if key in wanted:
            found[key] = version  # newest wins
    return found


class Router:
    """Each revision's slots (decoded from their JSON text) and routing by the rule set, each
    distinct (slots, residue) decoded and routed once for the whole export: rounds repeat
    explications, the space is small. The memo is dropped when it grows past ``limit``, so memory
    stays bounded whatever the round holds."""

    def __init__(self, rule_set: nsmcore.RuleSet, limit: int = 50_000) -> None:
        self.rule_set = rule_set
        self.limit = limit
        self.known: dict[tuple[str, str], tuple[dict[str, str], nsmcore.Routing]] = {}

    def __call__(self, chunk: list[tuple]) -> list[tuple[dict[str, str], nsmcore.Routing]]:
        if len(self.known) > self.limit:
            self.known.clear()
        keys = [(row[2], row[3]) for row in chunk]
        missing = [key for key in dict.fromkeys(keys) if key not in self.known]
        decoded = [json.loads(text) for text, _ in missing]
        objs = [{**slots, "residue": residue} for slots, (_, residue) in zip(decoded, missing, strict=True)]
        routed = nsmcore.route_batch(objs, self.rule_set)
        self.known.update(zip(missing, zip(decoded, routed, strict=True), strict=True))
        return [self.known[key] for key in keys]


def raw_rows(round_: Round, *, chunk_size: int = CHUNK) -> Iterator[list[dict[str, Any]]]:
    """The export's rows (dicts keyed by COLUMNS, in their order), a chunk at a time."""
    route = Router(active_rule_set())
    # flags, kept slots and prefills repeat: each distinct text is decoded once per export, in the
    # export's own bounded memo (the gold export's), so nothing outlives it or differs between processes
    memo = Encodings()

    def decode(text: str | None) -> Any:
        return memo.get(_decoded, text)

    def canonical(text: str) -> str:
        return memo.get(_canonical, text)

    # an annotation's revisions come together, oldest first: the first one's time is its creation
    first: tuple[int, Any] = (0, None)
    for chunk in _item_batches(round_, chunk_size):
        routed = route(chunk)
        versions = _parser_versions(round_, {(row[13], canonical(row[10])) for row in chunk if row[10]})
        out = []
        for row, (slots, routing) in zip(chunk, routed, strict=True):
            (annotation_id, version, _, residue, notes, flags, kept, spent, created, latest, prefill_text,
             assignment_id, status, item_id, source, source_id, username) = row  # fmt: skip
            if first[0] != annotation_id:
                first = (annotation_id, created)
            prefill = decode(prefill_text)
            prefilled = bool(prefill)
            out.append(
                {
                    "round": round_.name, "item_id": item_id, "source": source, "source_id": source_id,
                    "annotator": username, "assignment": assignment_id, "assignment_status": status,
                    "revision": version, "latest": version == latest,
                    **{name: slots.get(name, "") for name in SLOT_FIELDS},
                    "residue": residue, "notes": notes, "flags": list(decode(flags) or []),
                    "label": routing.label, "abstention": routing.abstention_type or "",
                    "rule_set_version": routing.rule_set_version, "prefilled": prefilled,
                    "prefill_parser": round_.prefill_parser if prefilled else "",
                    "prefill_parser_version": (
                        versions.get((item_id, canonical(prefill_text)), "") if prefilled else ""
                    ),
                    "prefill": prefill if prefilled else None,
                    "kept_prefill": list(decode(kept) or []) if prefilled else [],
                    "changed_from_prefill": (
                        [s for s in SLOT_FIELDS if prefill.get(s) != slots.get(s)] if prefilled else []
                    ),
                    "time_spent_ms": spent,
                    "created_at": first[1].isoformat(),
                    "submitted_at": created.isoformat(),
                }
            )  # fmt: skip
        yield out


def _decoded(_: Encodings, text: str | None) -> Any:
    return _decode(text)


def _canonical(memo: Encodings, text: str) -> str:
    return json.dumps(memo.get(_decoded, text), sort_keys=True)


def _decode(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def encode_jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


_JSON_AT = tuple(COLUMNS.index(name) for name in JSON_COLUMNS)
_BOOL_AT = tuple(COLUMNS.index(name) for name in ("latest", "prefilled"))


def encode_csv(rows: list[dict[str, Any]], *, header: bool = False) -> str:
    """CSV text of rows (as raw_rows makes them: keys in COLUMNS order): lists and objects as
    JSON text (a null prefill as an empty cell), booleans as true/false, and text that starts a
    formula (notes, residue, a round's name: annotator.csv_cells) behind an apostrophe."""
    buffer = io.StringIO()
    writer = csv_writer(buffer, lineterminator="\r\n")
    if header:
        writer.writerow(COLUMNS)
    dumps = json.dumps
    for row in rows:
        cells = list(row.values())
        for at in _JSON_AT:
            value = cells[at]
            cells[at] = "" if value is None else dumps(value, ensure_ascii=False)
        for at in _BOOL_AT:
            cells[at] = "true" if cells[at] else "false"
        writer.writerow(cells)
    return buffer.getvalue()


class PendingFile:
    """A file being written: its bytes are hashed and counted as they go."""

    def __init__(self, file) -> None:
        self.file = file
        self.digest = hashlib.sha256()
        self.bytes = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self.digest.update(data)
        self.bytes += len(data)
        self.file.write(data)


@contextmanager
def atomic_file(folder: Path, tag: str) -> Iterator[tuple[PendingFile, dict[str, Path]]]:
    """Write under a hidden temporary name in ``folder``; the caller names the file (in the dict,
    under "name": the name may depend on the content) and it is renamed into place when the block
    ends without an error and with a name. Otherwise the temporary file is removed: nothing
    partial is ever listed."""
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f"{TEMP_PREFIX}{tag}.tmp"
    target: dict[str, Path] = {}
    try:
        with temp.open("wb") as file:
            pending = PendingFile(file)
            yield pending, target
            file.flush()
            os.fsync(file.fileno())
        if "name" in target:
            os.replace(temp, folder / target["name"])
            target["path"] = folder / target["name"]
    finally:
        temp.unlink(missing_ok=True)


def run_raw_export(job: Job, params: RawExportParams) -> bool:
    """The worker's side: write the file, then its history row. False when cancelled (no file)."""
    round_ = job.round
    folder = Path(settings.NSM_EXPORT_DIR)
    tag = f"raw{job.pk}"
    remove_partials(folder, tag)
    Job.objects.filter(pk=job.pk).update(total=revisions_of(round_).count(), done=0)
    encode = encode_jsonl if params.format == "jsonl" else encode_csv
    rows = annotations = 0
    annotators: set[str] = set()
    with atomic_file(folder, tag) as (out, target):
        if params.format == "csv":
            out.write(encode_csv([], header=True))
        for chunk in raw_rows(round_, chunk_size=CHUNK):
            if job_stopped(job.pk):
                return False
            out.write(encode(chunk))
            rows += len(chunk)
            annotations += sum(row["latest"] for row in chunk)
            annotators.update(row["annotator"] for row in chunk)
            with transaction.atomic():
                Job.objects.filter(pk=job.pk).update(done=F("done") + len(chunk))
        sha = out.digest.hexdigest()
        target["name"] = f"annotations-{_slug(round_.name)}-{sha[:12]}.{params.format}"
    rule_set = active_rule_set()
    manifest = {
        "kind": Export.Kind.RAW, "format": params.format, "round": round_.name,
        "rows": rows, "annotations": annotations, "annotators": sorted(annotators),
        "columns": list(COLUMNS), "rule_set": {"version": rule_set.version, "hash": rule_set.content_hash},
        "software_version": nsmcore.__version__, "sha256": sha,
    }  # fmt: skip
    export = Export.objects.create(
        kind=Export.Kind.RAW, job=job, round=round_, created_by=job.created_by, filename=target["name"],
        bytes=out.bytes, sha256=sha, jsonl_sha256=sha if params.format == "jsonl" else "", records=rows,
        rule_set_version=rule_set.version, manifest=manifest,
    )  # fmt: skip
    ready = {"export": export.pk, "kind": export.kind, "job": job.pk, "round": export.round_id}
    event_send("export.ready", {**ready, "file": export.filename, "sha256": export.sha256})  # webhooks
    Job.objects.filter(pk=job.pk).update(
        summary={"export": export.pk, "file": export.filename, "records": rows, "bytes": export.bytes}
    )
    return True


def describe_raw_export(job: Job, params: RawExportParams) -> str:
    return format_html(_("every annotation revision as <code>{}</code>"), params.format.upper())


job_kind_register(
    JobKind(
        name=RAW_EXPORT,
        label=gettext_lazy("raw-annotation export"),
        params=RawExportParams,
        run=run_raw_export,
        describe=describe_raw_export,
        status_template="exports/_status_rawexport.html",
        form="exports.forms.RawExportForm",
        form_template="exports/_raw_export_form.html",
        related=("export",),
        result_path=export_result_path,
        results_page=("exports", gettext_lazy("Exports")),
        unit=gettext_lazy("revisions"),
    )
)
