"""Replay: rebuild a published EmoExpl archive from the history the database records, and prove
it byte for byte (``manage.py replay ARCHIVE``, the API and the Exports page).

The archive's manifest carries the export's recipe (exports.recipe): the moment it read the
database. Gold is rebuilt as of then from the raw annotation revisions, the gold decisions' audit
trail, the conventions and their votes (exports.history), routed under the rule set active then,
rendered, with the verifier's recorded judgements; the manifest, card and schema are written
again; the same deterministic writer (nsmcore.emoexpl) zips them in the export's order. Then
every record, file and the archive's sha256 are compared with the published ones: any
difference is listed by item, slot and field.

It reads the archive as a stream (one batch of records at a time beside the rebuilt batch) and
keeps the first ``LISTED`` differences, so memory does not grow with the corpus. It writes
nothing to the database; the rebuilt archive goes to a temporary folder (or ``keep``).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

import nsmcore
from annotator.models import Item, Round
from contrasts.split import CONTRAST_NAME
from exports.export import SCHEMA_NAME
from exports.history import ConventionBook, GoldState, agreement_as_of, gold_states, rule_set_as_of
from exports.models import Export
from exports.recipe import (
    AsOf,
    RecipeError,
    acceptance_now,
    as_of_recipe,
    as_of_time,
    convention_entries,
    export_recipe,
)
from exports.records import Tally
from exports.replay_build import SetNames, VerifierMeta, batch_records, contrast_as_of, replay_manifest
from exports.replay_diff import (
    ABSENT,
    PRESENT,
    Difference,
    Differences,
    contrast_differences,
    manifest_differences,
    record_differences,
    text_difference,
    unresolved_differences,
)
from nsmcore import emoexpl, jsonio

LISTED = 200  # differences listed (all are counted)
MANIFEST_LIMIT = 64 << 20  # a manifest larger than this is no export's


class ReplayInputError(ValueError):
    """An archive the replay cannot read or date: the command's exit 2, the API's 400 (the
    exception handler, config.errors, reads ``api_status`` and ``api_body``: the archive is at fault)."""

    api_status = 400

    def api_body(self) -> dict[str, Any]:
        return {"detail": str(self), "archive": [str(self)]}


@dataclass
class ReplayResult:
    archive: str
    archive_sha256: str
    replay_sha256: str = ""
    records: int = 0  # in the archive
    replayed: int = 0  # rebuilt
    differences: Differences = field(default_factory=lambda: Differences(LISTED))
    notes: list[str] = field(default_factory=list)
    as_of: dict[str, Any] = field(default_factory=dict)
    recipe: bool = True

    @property
    def identical(self) -> bool:
        return self.replay_sha256 == self.archive_sha256

    def as_dict(self) -> dict[str, Any]:
        return {
            "archive": self.archive, "identical": self.identical, "archive_sha256": self.archive_sha256,
            "replay_sha256": self.replay_sha256, "records": self.records, "replayed": self.replayed,
            "differing_records": self.differences.items, "differences_total": self.differences.total,
            "differences": [d.as_dict() for d in self.differences.kept], "notes": self.notes,
            "as_of": self.as_of, "recipe": self.recipe,
        }  # fmt: skip


# The published archive ---------------------------------------------------------------------------


@dataclass
class Published:
    zf: zipfile.ZipFile
    sha256: str
    names: list[str]
    manifest: dict[str, Any]


def _open(path: Path, name: str) -> Published:
    """The archive, checked to be an EmoExpl one; ReplayInputError saying why not."""
    try:
        sha = emoexpl.file_sha256(path)
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ReplayInputError(_("%(path)s: no such file") % {"path": name}) from None
    except zipfile.BadZipFile:
        raise ReplayInputError(
            _("%(path)s is not a zip archive: an EmoExpl archive is the zip an export writes")
            % {"path": name}
        ) from None
    except OSError as error:
        raise ReplayInputError(
            _("cannot read %(path)s: %(error)s") % {"path": name, "error": error.strerror or error}
        ) from None
    names = zf.namelist()
    problem = ""
    manifest: Any = None
    if emoexpl.MANIFEST_NAME not in names or emoexpl.JSONL_NAME not in names:
        problem = _("it holds no %(files)s") % {"files": f"{emoexpl.MANIFEST_NAME} + {emoexpl.JSONL_NAME}"}
    elif zf.getinfo(emoexpl.MANIFEST_NAME).file_size > MANIFEST_LIMIT:
        problem = _("its manifest is too large")
    else:
        try:
            manifest = jsonio.loads(zf.read(emoexpl.MANIFEST_NAME))
        except jsonio.JSONTooComplex as error:
            problem = _("its manifest cannot be read: %(error)s") % {"error": error}
        except (ValueError, zipfile.BadZipFile, OSError):
            problem = _("its manifest is not JSON")
        if not problem and (not isinstance(manifest, dict) or manifest.get("name") != "EmoExpl"):
            problem = _("its manifest does not name EmoExpl")
        elif not problem and manifest.get("format") != emoexpl.FORMAT:
            problem = _("its format %(format)s is not %(ours)s") % {
                "format": repr(manifest.get("format")), "ours": emoexpl.FORMAT,
            }  # fmt: skip
    if problem:
        zf.close()
        raise ReplayInputError(_("%(path)s is not an EmoExpl archive: %(problem)s") % {"path": name,
                               "problem": problem})  # fmt: skip
    return Published(zf, sha, names, manifest)


def _as_of(published: Published, result: ReplayResult) -> AsOf:
    """The moment the archive was made: its recipe's; for an archive without one, when its export
    (found by the archive's sha256 in the history) was made, else its last gold change."""
    recipe = published.manifest.get("recipe")
    if recipe is not None:
        try:
            return as_of_recipe(recipe)
        except RecipeError as error:
            raise ReplayInputError(f"{result.archive}: {error}") from None
    result.recipe = False
    stored = Export.objects.filter(sha256=published.sha256).order_by("pk").first()
    if stored is not None:
        result.notes.append(_("no recipe: rebuilt as of the time its export was recorded"))
        return as_of_time(stored.created_at)
    at = parse_datetime(published.manifest.get("gold_as_of") or "")
    if at is None:
        raise ReplayInputError(
            _("%(path)s has no recipe, names no gold change and is not in the export history: "
              "nothing tells when it was made") % {"path": result.archive}
        )  # fmt: skip
    result.notes.append(_("no recipe: rebuilt as of its last gold change (gold_as_of)"))
    return as_of_time(at)


def _scope(published: Published) -> Round | None:
    recipe = published.manifest.get("recipe") or {}
    scope = (recipe.get("scope") or {}).get("round") if recipe else None
    if scope is None and not recipe:
        text = str(published.manifest.get("scope", ""))
        scope = text.removeprefix("round ") if text.startswith("round ") else None
    if scope is None:
        return None
    round_ = Round.objects.filter(name=scope).first()
    if round_ is None:
        raise ReplayInputError(
            _("the archive's round %(name)s is not in this database: it cannot be rebuilt here")
            % {"name": repr(scope)}
        )
    return round_


def _rounds(published: Published, round_: Round | None, as_of: AsOf) -> list[Round]:
    """The rounds in scope, in the export's order: the one, or those the recipe names (an archive
    without one: those made by then)."""
    if round_ is not None:
        return [round_]
    recipe = published.manifest.get("recipe")
    if recipe is None:
        made = Round.objects.filter(created_at__lte=as_of.at) if as_of.at else Round.objects.all()
        return list(made.order_by("pk"))
    names = [str(r.get("name")) for r in recipe.get("rounds") or [] if isinstance(r, dict)]
    rounds = list(Round.objects.filter(name__in=names).order_by("pk"))
    missing = sorted(set(names) - {r.name for r in rounds})
    if missing:
        raise ReplayInputError(
            _("the archive's round %(name)s is not in this database: it cannot be rebuilt here")
            % {"name": repr(missing[0])}
        )
    return rounds


# The archive's records, beside the rebuilt ones -------------------------------------------------


_STRING = r'("(?:[^"\\]|\\.)*")'  # a JSON string
_HEAD = re.compile(rf'\{{"id":{_STRING},"source":{_STRING},"source_id":{_STRING},')


def _head(line: str) -> dict[str, Any] | None:
    """A record's id, source and source id, read from the start of its line (a record's first
    keys, as every export writes them), else from the whole line; None when it is not a JSON
    object. The whole record is decoded only where it differs."""
    found = _HEAD.match(line)
    if found:
        return dict(zip(("id", "source", "source_id"), map(json.loads, found.groups()), strict=True))
    try:
        obj = jsonio.loads(line)
    except ValueError:  # not JSON, or JSON too complex to read (jsonio.JSONTooComplex)
        return None
    return obj if isinstance(obj, dict) else None


class ArchiveRecords:
    """The published records one at a time, each with its item's id (looked up a batch at a
    time; None for an item this database does not hold)."""

    def __init__(self, zf: zipfile.ZipFile, batch: int):
        self.stream = io.TextIOWrapper(zf.open(emoexpl.JSONL_NAME), encoding="utf-8", newline="\n")
        self.batch = batch
        self.count = 0
        self._rows = self._read()
        self.head: tuple[int | None, str, str, Any] | None = next(self._rows, None)

    def _read(self) -> Iterator[tuple[int | None, str, str, Any]]:
        while True:
            chunk = []
            for line in self.stream:
                chunk.append((line, _head(line)))
                if len(chunk) >= self.batch:
                    break
            if not chunk:
                return
            keys = {(str(o.get("source")), str(o.get("source_id"))) for _line, o in chunk if o}
            ids = {}
            for source in {s for s, _sid in keys}:
                wanted = [i for s, i in keys if s == source]
                for pk, sid in Item.objects.filter(source=source, source_id__in=wanted).values_list(
                    "pk", "source_id"
                ):
                    ids[(source, sid)] = pk
            for line, obj in chunk:
                self.count += 1
                key = str(obj.get("id", "")) if obj else f"line {self.count}"
                item_id = ids.get((str(obj.get("source")), str(obj.get("source_id")))) if obj else None
                yield item_id, key, line, obj

    def next(self) -> None:
        self.head = next(self._rows, None)


def _compare(archive: ArchiveRecords, states: list[GoldState], lines: dict[int, str], found: Differences,
             notes: list[str]) -> None:  # fmt: skip
    """Merge one rebuilt batch (item order) with the archive's records."""
    for state in states:
        while archive.head is not None and (archive.head[0] is None or archive.head[0] < state.item_id):
            _only_in_archive(archive, found)
        line = lines.get(state.gold_id)
        here = archive.head is not None and archive.head[0] == state.item_id
        if state.problems and (line is not None or here) and len(notes) < LISTED:
            notes.extend(f"{state.key}: {p}" for p in state.problems[:3])
        if here:
            _item, key, published, obj = archive.head
            archive.next()
            if line is None:
                first = state.construals[0].slots if state.construals else None
                found.add_record(unresolved_differences(key, _whole(published), first))
            elif line != published:
                diffs = record_differences(key, _whole(published), _whole(line)) if obj else []
                found.add_record(diffs or [Difference(key, "record", published[:200], line[:200])])
        elif line is not None:
            found.add_record([Difference(state.key, "record", ABSENT, PRESENT)])


def _whole(line: str) -> dict[str, Any]:
    try:
        obj = jsonio.loads(line)
    except ValueError:  # not JSON, or too complex to read (jsonio.JSONTooComplex): nothing to compare
        return {}
    return obj if isinstance(obj, dict) else {}


def _only_in_archive(archive: ArchiveRecords, found: Differences) -> None:
    item_id, key, _line, obj = archive.head
    field_ = "record" if obj is not None else "record (not JSON)"
    found.add_record([Difference(key, field_, PRESENT, ABSENT if item_id else _("no such item here"))])
    archive.next()


# The replay --------------------------------------------------------------------------------------


def replay_archive(path: Path, *, keep: Path | None = None, label: str = "") -> ReplayResult:
    """Rebuild the archive at ``path`` from the database's history and compare; ReplayInputError
    for an archive that is not an EmoExpl one or cannot be dated. ``keep``: also copy the rebuilt
    archive there (a file or folder); ``label``: the archive's name in the result and messages
    (default: the file's)."""
    name = label or Path(path).name
    published = _open(Path(path), name)
    try:
        return _replay(published, name, keep)
    except (zipfile.BadZipFile, zlib.error, EOFError, UnicodeDecodeError) as error:
        raise ReplayInputError(_("%(path)s is damaged: %(error)s") % {"path": name, "error": error}) from None
    finally:
        published.zf.close()


def _replay(published: Published, name: str, keep: Path | None) -> ReplayResult:
    result = ReplayResult(name, published.sha256)
    as_of = _as_of(published, result)
    result.as_of = as_of.as_dict()
    round_ = _scope(published)
    rounds = _rounds(published, round_, as_of)
    recipe = published.manifest.get("recipe")
    acceptance = _acceptance(recipe)
    book = ConventionBook.load(acceptance)
    rule_set, activation = rule_set_as_of(as_of)
    verifier = VerifierMeta.of(published.manifest)
    if recipe and recipe.get("renderer_version") != nsmcore.RENDERER_VERSION:
        result.notes.append(
            _("the archive's lines were rendered by renderer version %(then)s, this software's is %(now)s")
            % {"then": recipe.get("renderer_version"), "now": nsmcore.RENDERER_VERSION}
        )
    round_map = {r.pk: r for r in Round.objects.all()}
    sets, tally, found = SetNames(), Tally(), result.differences
    size = max(1, settings.NSM_EXPORT_BATCH_SIZE)
    archive = ArchiveRecords(published.zf, size)
    item_ids: set[int] = set()
    gold_as_of = None
    with tempfile.TemporaryDirectory(prefix="replay-") as folder:
        with emoexpl.atomic_archive(Path(folder), tag="replay") as pending:
            with pending.writer.stream(emoexpl.JSONL_NAME) as out:
                for states in gold_states(as_of, round_.pk if round_ else None, size, book):
                    lines = batch_records(states, rounds=round_map, sets=sets, rule_set=rule_set,
                                          verifier=verifier, tally=tally)  # fmt: skip
                    for s in states:
                        if s.gold_id in lines:
                            out.write(lines[s.gold_id])
                            item_ids.add(s.item_id)
                            if s.last_change and (gold_as_of is None or s.last_change > gold_as_of):
                                gold_as_of = s.last_change
                    _compare(archive, states, lines, found, result.notes)
            while archive.head is not None:
                _only_in_archive(archive, found)
            result.records, result.replayed = archive.count, tally.items
            jsonl = pending.writer.files[emoexpl.JSONL_NAME]
            contrast, contrast_sets, contrast_pairs = contrast_as_of(as_of.at, item_ids)
            if contrast_pairs:
                pending.writer.add(CONTRAST_NAME, contrast)
            in_force = book.in_force(as_of, {r.pk for r in rounds})
            rebuilt_recipe = None
            if recipe is not None:
                rebuilt_recipe = export_recipe(
                    as_of=as_of, round_=round_, rounds=rounds, tier_sets={n for _tier, n in tally.tiers},
                    rule_set=rule_set, activation=activation, conventions=convention_entries(in_force, as_of),
                    acceptance=acceptance, software_version=str(recipe.get("software_version", "")),
                )  # fmt: skip
            files = {emoexpl.JSONL_NAME: {**jsonl, "records": tally.items}}
            if contrast_pairs:
                files[CONTRAST_NAME] = {**pending.writer.files[CONTRAST_NAME], "records": contrast_pairs}
            manifest = replay_manifest(
                published=published.manifest, round_=round_, tally=tally, verifier=verifier,
                gold_as_of=gold_as_of, agreement=agreement_as_of(as_of, rounds), conventions=in_force,
                rule_set=rule_set, files=files, contrast_sets=contrast_sets, contrast_pairs=contrast_pairs,
                recipe=rebuilt_recipe,
            )  # fmt: skip
            pending.writer.add(
                emoexpl.MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
            )
            pending.writer.add(emoexpl.CARD_NAME, emoexpl.dataset_card(manifest))
            pending.writer.add(SCHEMA_NAME, json.dumps(emoexpl.record_schema(), indent=2) + "\n")
            pending.name = f"replay-{jsonl['sha256'][:12]}.zip"
        result.replay_sha256 = emoexpl.file_sha256(pending.path)
        _compare_files(published, pending.path, manifest, found)
        if not result.identical and found.total == 0:
            found.add(Difference("", "archive sha256", published.sha256, result.replay_sha256))
            result.notes.append(
                _("every file is identical: the zip container differs (another compression library?)")
            )
        if keep is not None:
            target = keep / name if keep.is_dir() else keep
            shutil.copyfile(pending.path, target)
    return result


def _acceptance(recipe: dict[str, Any] | None) -> tuple[int, float]:
    rule = (recipe or {}).get("acceptance")
    if isinstance(rule, dict) and "quorum" in rule and "majority" in rule:
        return int(rule["quorum"]), float(rule["majority"])
    return acceptance_now()


def _compare_files(published: Published, rebuilt: Path, manifest: dict[str, Any], found: Differences) -> None:
    with zipfile.ZipFile(rebuilt) as mine:
        names = mine.namelist()
        if names != published.names:
            found.add(Difference("", "files", published.names, names))
        for name in names:
            if name == emoexpl.JSONL_NAME or name not in published.names:
                continue
            theirs, ours = published.zf.read(name), mine.read(name)
            if theirs == ours:
                continue
            if name == emoexpl.MANIFEST_NAME:
                diffs = manifest_differences(published.manifest, manifest)
                for d in diffs or [text_difference(name, theirs, ours)]:
                    found.add(d)
            elif name == CONTRAST_NAME:
                for d in contrast_differences(theirs, ours):
                    found.add(d)
            else:
                found.add(text_difference(name, theirs, ours))


def replay_stored(export: Export, *, keep: Path | None = None) -> ReplayResult:
    """Replay an export of the history (its file on the server); ReplayInputError when it is a raw
    export or its file is gone."""
    if export.kind != Export.Kind.EMOEXPL:
        raise ReplayInputError(_("export #%(id)s holds raw annotations: only an EmoExpl archive is replayed")
                               % {"id": export.pk})  # fmt: skip
    if not export.path.is_file():
        raise ReplayInputError(
            _("%(file)s is no longer on the server; export again to make it") % {"file": export.filename}
        )
    return replay_archive(export.path, keep=keep)
