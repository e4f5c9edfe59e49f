"""Importing items from crowd-enVent TSV, JSONL or CSV.

Reading is separate from writing: :func:`read_items` turns a file into validated rows or raises
:class:`ImportFileError` with every problem (line and column named); :func:`items_import` writes
all rows in one transaction or nothing. Re-importing the same file creates nothing new and says
so; a row whose id exists with different content is refused rather than silently overwritten.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotator.events import event_send
from annotator.models import Item
from annotator.queries import items_copy, items_insert_many
from nsmcore import jsonio
from nsmcore.baselines import APPRAISALS  # the corpus's 21 rating columns, one home
from rules.rulesets import active_rule_set

# Kept as item metadata; demographics and participant ids are deliberately not imported.
METADATA: tuple[str, ...] = ("round_number", "event_duration", "emotion_duration", "intensity", "confidence")
# Accepted spellings of the four fields a row needs, per format.
ALIASES: dict[str, tuple[str, ...]] = {
    "source_id": ("text_id", "id", "source_id"),
    "reference_label": ("emotion", "reference_label", "label"),
    "text": ("generated_text", "text"),
    "masked_text": ("hidden_emo_text", "masked_text"),
}
FORMATS: tuple[str, ...] = ("tsv", "csv", "jsonl")
MAX_REPORTED = 50


@dataclass(frozen=True)
class ImportProblem:
    line: int
    column: str
    message: str

    def __str__(self) -> str:
        if not self.line:  # about the whole file (its name, encoding, emptiness), not one of its lines
            return self.message
        named = {"line": self.line, "column": self.column, "message": self.message}
        if self.column:
            return _("line %(line)s, column %(column)s: %(message)s") % named
        return _("line %(line)s: %(message)s") % named


def capped(problems: list[ImportProblem]) -> list[ImportProblem]:
    """The first MAX_REPORTED problems, then one (line 0) saying how many more there were, so
    that every place that lists them (page, command, message) says so."""
    if len(problems) <= MAX_REPORTED:
        return list(problems)
    more = _("... and %(n)s more") % {"n": len(problems) - MAX_REPORTED}
    return [*problems[:MAX_REPORTED], ImportProblem(0, "", more)]


class ImportFileError(ValueError):
    def __init__(self, problems: list[ImportProblem]):
        self.problems = capped(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


@dataclass
class ImportReport:
    rows: int = 0
    created: int = 0
    unchanged: int = 0
    source: str = ""
    # every row's id in file order: what an item set "of this file" holds (annotator.import_api)
    source_ids: list[str] = field(default_factory=list, repr=False)

    def summary(self) -> str:
        rows = ngettext("%(n)s row", "%(n)s rows", self.rows) % {"n": self.rows}
        created = ngettext("%(n)s item", "%(n)s items", self.created) % {"n": self.created}
        return _(
            "%(rows)s read from %(source)s: %(created)s created, %(unchanged)s already present and unchanged"
        ) % {
            "rows": rows,
            "source": self.source,
            "created": created,
            "unchanged": self.unchanged,
        }


DEFAULT_SOURCE = "crowd-enVent"


def default_source(*, fmt: str, filename: str) -> str:
    """The source an import is recorded under when the admin names none: crowd-enVent for its
    TSV format, otherwise the file's name without its extension (a JSONL or CSV file is
    rarely crowd-enVent, and its ids would then collide with that corpus's)."""
    if fmt == "tsv":
        return DEFAULT_SOURCE
    stem = PurePath(filename).name.rsplit(".", 1)[0].strip()
    return stem[:64] or DEFAULT_SOURCE


def detect_format(filename: str) -> str:
    lower = filename.lower()
    for fmt in FORMATS:
        if lower.endswith(f".{fmt}"):
            return fmt
    if lower.endswith(".json"):
        return "jsonl"
    raise ImportFileError(
        [
            ImportProblem(
                0,
                "",
                _("cannot tell the format of %(name)s from its name: choose TSV, JSONL or CSV")
                % {"name": repr(filename)},
            )
        ]
    )


def read_jsonl(data: bytes | str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; ImportFileError names every bad line."""
    problems: list[ImportProblem] = []
    rows = list(_records(_decode(data), "jsonl", problems))
    if problems:
        raise ImportFileError(problems)
    return rows


def _decode(data: bytes | str) -> str:
    """The file as text; ImportFileError names each line holding a byte that is not UTF-8."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    problems = []
    # b"\n" is never part of a multi-byte UTF-8 character, so each line decodes on its own.
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as error:
            start = error.start + (3 if number == 1 and line.startswith(b"\xef\xbb\xbf") else 0)
            problems.append(
                ImportProblem(
                    number,
                    "",
                    _("not UTF-8 text (byte 0x%(byte)s, byte %(position)s of the line)")
                    % {"byte": f"{line[start]:02x}", "position": start + 1},
                )
            )
    raise ImportFileError(problems or [ImportProblem(0, "", _("not UTF-8 text"))])


def _records(data: str, fmt: str, problems: list[ImportProblem]) -> Iterable[tuple[int, dict[str, Any]]]:
    """(line number, row) for every readable row; each unreadable one is added to ``problems``."""
    if fmt in ("tsv", "csv"):
        reader = csv.DictReader(io.StringIO(data, newline=""), delimiter="\t" if fmt == "tsv" else ",")
        for row in reader:
            if None in row:
                problems.append(
                    ImportProblem(
                        reader.line_num,
                        "",
                        _("more fields than the %(n)s headers") % {"n": len(reader.fieldnames)},
                    )
                )
                continue
            yield reader.line_num, row
        return
    # Lines end at "\n" only: str.splitlines() also cuts at U+2028 and other separators, which
    # JSON allows unescaped inside a string.
    for number, line in enumerate(data.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = jsonio.loads(line)
        except json.JSONDecodeError as error:
            problems.append(
                ImportProblem(
                    number,
                    "",
                    _("malformed JSON: %(error)s (character %(column)s)")
                    % {"error": error.msg, "column": error.colno},
                )
            )
            continue
        except jsonio.JSONTooComplex as error:
            problems.append(ImportProblem(number, "", str(error)))
            continue
        if not isinstance(obj, dict):
            problems.append(ImportProblem(number, "", _("expected a JSON object")))
            continue
        yield number, obj


def _pick(row: dict[str, Any], key: str) -> tuple[str | None, Any]:
    for name in ALIASES[key]:
        if name in row:
            return name, row[name]
    return None, None


def read_items(data: bytes | str, fmt: str) -> list[dict[str, Any]]:
    """Validated item rows (model field values) from a file's content, or ImportFileError."""
    if fmt not in FORMATS:
        raise ImportFileError(
            [
                ImportProblem(
                    0,
                    "",
                    _("unknown format %(format)s; use one of %(formats)s")
                    % {"format": repr(fmt), "formats": ", ".join(FORMATS)},
                )
            ]
        )
    data = _decode(data)
    labels = set(active_rule_set().emotions)
    required = ("source_id", "reference_label", "text") + (("masked_text",) if fmt == "tsv" else ())
    problems: list[ImportProblem] = []
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    absent: dict[str, list[int]] = {key: [] for key in required}  # lines without the field at all
    for line, raw in _records(data, fmt, problems):
        row: dict[str, Any] = {"line": line}
        given: list[tuple[str, Any]] = []  # (column, value) the file gave, to check they can be stored
        for key in ("source_id", "reference_label", "text", "masked_text"):
            column, value = _pick(raw, key)
            value = "" if value is None else str(value).strip()
            if column is not None:
                given.append((column, value))
            if key in required and column is None:
                absent[key].append(line)
            elif key in required and not value:
                problems.append(ImportProblem(line, column, _("missing or empty")))
            row[key] = value
        if row["reference_label"] and row["reference_label"] not in labels:
            column = _pick(raw, "reference_label")[0]
            problems.append(
                ImportProblem(
                    line,
                    column or "emotion",
                    _("%(label)s is not an emotion of rule set v%(version)s; allowed: %(allowed)s")
                    % {
                        "label": repr(row["reference_label"]),
                        "version": active_rule_set().version,
                        "allowed": ", ".join(sorted(labels)),
                    },
                )
            )
        if row["source_id"] in seen:
            problems.append(
                ImportProblem(
                    line,
                    "text_id",
                    _("%(id)s repeats line %(line)s")
                    % {"id": repr(row["source_id"]), "line": seen[row["source_id"]]},
                )
            )
        seen.setdefault(row["source_id"], line)
        if not row["masked_text"]:
            row["masked_text"] = row["text"]  # a file with one text serves it for both fields
        appraisals = {}
        for name in APPRAISALS:
            value = raw.get(name)
            if value in (None, ""):
                continue
            try:
                appraisals[name] = int(value)
            except (TypeError, ValueError):
                problems.append(
                    ImportProblem(
                        line, name, _("%(value)s is not a whole-number rating") % {"value": repr(value)}
                    )
                )
        row["appraisals"] = appraisals
        row["metadata"] = {name: raw[name] for name in METADATA if raw.get(name) not in (None, "")}
        for column, value in [*given, *row["metadata"].items()]:
            problem = _unstorable(value)
            if problem:
                problems.append(ImportProblem(line, column, problem))
        rows.append(row)
    problems += _absent_fields(absent, len(rows), fmt, data)
    if not rows and not problems:
        problems.append(ImportProblem(0, "", _("the file holds no rows")))
    if problems:
        raise ImportFileError(sorted(problems, key=lambda p: p.line))
    return rows


def _unstorable(value: Any) -> str:
    """Why a value cannot be stored as text ("" when it can): a NUL character (PostgreSQL
    refuses it) or a lone surrogate (JSON may spell one; it is no UTF-8), nested values included."""
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((p for p in map(_unstorable, value) if p), "")
    return unstorable_text(value) if isinstance(value, str) else ""


def unstorable_text(value: str) -> str:
    """Why a string cannot be stored ("" when it can): a NUL (PostgreSQL refuses it) or a lone
    surrogate (not encodable as UTF-8). The import and the annotation services both ask it."""
    if "\x00" in value:
        return _("contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return _("contains a lone surrogate (%(character)s), not text") % {
            "character": ascii(value[error.start])
        }
    return ""


def _absent_fields(absent: dict[str, list[int]], rows: int, fmt: str, data: str) -> list[ImportProblem]:
    """A required field absent from every row is one problem (a column the header lacks), not
    one per row; absent from some JSONL lines, it is named on each of them."""
    problems = []
    for key, lines in absent.items():
        names = " or ".join(ALIASES[key][:2])
        if not lines:
            continue
        if len(lines) < rows:
            problems += [ImportProblem(line, names, _("missing or empty")) for line in lines]
        elif fmt == "jsonl":
            if names[0] in "aeiou":
                message = _("no line has an %(names)s field") % {"names": names}
            else:
                message = _("no line has a %(names)s field") % {"names": names}
            problems.append(ImportProblem(0, "", message))
        else:
            delimiter = "\t" if fmt == "tsv" else ","
            header = next(csv.reader(io.StringIO(data, newline=""), delimiter=delimiter), [])
            shown = ", ".join(h for h in header if h) or _("nothing")
            problems.append(
                ImportProblem(
                    1,
                    "",
                    _("no %(names)s column; the header has: %(header)s") % {"names": names, "header": shown},
                )
            )
    return problems


@dataclass
class _Plan:
    rows: list[dict[str, Any]]
    new: list[dict[str, Any]]
    present: set[str]
    conflicts: list[ImportProblem]

    def digest(self) -> str:
        """A checksum of which rows would be created: a confirmation must create the same."""
        ids = "\n".join(sorted(r["source_id"] for r in self.new))
        return hashlib.sha256(ids.encode()).hexdigest()


def source_items(source: str, source_ids: list[str], *fields: str) -> list[tuple[Any, ...]]:
    """(source_id, *fields) of the items of ``source`` among ``source_ids``. A source no larger
    than twice the ids (a new one, a file imported again) is read whole and picked from here:
    a query naming thousands of ids costs more to build than the rows cost to read (0.1 s for
    5,400 on PostgreSQL, the api_import benchmark); a new source costs one count."""
    items = Item.objects.filter(source=source)
    total = items.count()
    if not total:
        return []
    wanted = set(source_ids)
    if total <= 2 * len(wanted):
        return [row for row in items.values_list("source_id", *fields) if row[0] in wanted]
    return list(items.filter(source_id__in=wanted).values_list("source_id", *fields))


def _plan(data: bytes | str, fmt: str, source: str) -> _Plan:
    rows = read_items(data, fmt)
    existing = {
        sid: (text, masked, label)
        for sid, text, masked, label in source_items(
            source, [r["source_id"] for r in rows], "text", "masked_text", "reference_label"
        )
    }
    plan = _Plan(rows, [], set(), [])
    for row in rows:
        old = existing.get(row["source_id"])
        if old is None:
            plan.new.append(row)
        elif old == (row["text"], row["masked_text"], row["reference_label"]):
            plan.present.add(row["source_id"])
        else:
            plan.conflicts.append(
                ImportProblem(
                    row["line"],
                    "text_id",
                    _(
                        "%(id)s already exists in %(source)s with a different text or label; "
                        "refusing to overwrite it"
                    )
                    % {"id": repr(row["source_id"]), "source": source},
                )
            )
    return plan


@dataclass
class PreviewRow:
    line: int
    source_id: str
    reference_label: str
    text: str
    masked_text: str
    new: bool


@dataclass
class ImportPreview:
    """What an import would do, written nowhere: the first rows as they would be stored, the
    counts, and every problem (a preview with problems cannot be confirmed)."""

    source: str
    rows: int = 0
    new: int = 0
    present: int = 0
    first: list[PreviewRow] = field(default_factory=list)
    per_label: list[tuple[str, int, int]] = field(default_factory=list)  # label, rows, new
    problems: list[ImportProblem] = field(default_factory=list)
    digest: str = ""


def items_preview(
    *, data: bytes | str, fmt: str, source: str = "crowd-enVent", first: int = 10
) -> ImportPreview:
    """Read and check a file against the database without writing anything."""
    preview = ImportPreview(source=source)
    try:
        plan = _plan(data, fmt, source)
    except ImportFileError as error:
        preview.problems = error.problems
        return preview
    preview.problems = capped(plan.conflicts)
    preview.rows, preview.new, preview.present = len(plan.rows), len(plan.new), len(plan.present)
    preview.first = [
        PreviewRow(
            r["line"], r["source_id"], r["reference_label"], r["text"], r["masked_text"],
            r["source_id"] not in plan.present,
        )
        for r in plan.rows[:first]
    ]  # fmt: skip
    rows_per_label = Counter(r["reference_label"] for r in plan.rows)
    new_per_label = Counter(r["reference_label"] for r in plan.new)
    preview.per_label = [(label, n, new_per_label[label]) for label, n in sorted(rows_per_label.items())]
    preview.digest = plan.digest()
    return preview


def items_import(
    *, data: bytes | str, fmt: str, source: str = "crowd-enVent", expected: str | None = None
) -> ImportReport:
    """Create the file's items in one transaction; nothing is written if any row is refused.
    ``expected`` is the digest of a preview: if the rows to create are no longer the previewed
    ones (the database changed in between), nothing is written."""
    with transaction.atomic():
        plan = _checked_plan(data, fmt, source, expected)
        try:
            with transaction.atomic():  # a savepoint: another import may add the same rows meanwhile
                _insert(plan.new, source)
        except IntegrityError:
            # It committed some of these rows between this plan and this insert: plan again, and
            # they are present now (reused, as on a second import of the file) or conflicting.
            plan = _checked_plan(data, fmt, source, expected)
            _insert(plan.new, source)
        if plan.new:  # webhooks: item_set.imported (annotator.events)
            event_send(
                "item_set.imported", {"source": source, "rows": len(plan.rows), "created": len(plan.new)}
            )
    return ImportReport(
        rows=len(plan.rows),
        created=len(plan.new),
        unchanged=len(plan.present),
        source=source,
        source_ids=[r["source_id"] for r in plan.rows],
    )


def _checked_plan(data: bytes | str, fmt: str, source: str, expected: str | None) -> _Plan:
    plan = _plan(data, fmt, source)
    if plan.conflicts:
        raise ImportFileError(plan.conflicts)
    if expected is not None and plan.digest() != expected:
        raise ImportFileError(
            [
                ImportProblem(
                    0,
                    "",
                    _(
                        "the items of %(source)s changed since the preview, so this file would now create "
                        "%(n)s items, not what you saw; preview it again"
                    )
                    % {"source": source, "n": len(plan.new)},
                )
            ]
        )
    return plan


ITEM_COLUMNS = ("source", "source_id", "text", "masked_text", "reference_label", "appraisals", "metadata")


def _insert(rows: list[dict[str, Any]], source: str) -> None:
    """Insert new items: COPY on PostgreSQL, one prepared INSERT on SQLite (``annotator.queries``
    says why), bulk_create elsewhere."""
    if not rows:
        return
    if items_copy(rows, source, ITEM_COLUMNS) or items_insert_many(rows, source, ITEM_COLUMNS):
        return
    Item.objects.bulk_create(
        [Item(source=source, **{c: row[c] for c in ITEM_COLUMNS[1:]}) for row in rows],
        batch_size=2000,
    )
