"""The EmoExpl archive: the gold corpus as JSONL (one record per item), its manifest and a dataset
card, in one zip whose bytes depend only on what is written into it.

Plain Python: the app collects the records; this module lays them out. Determinism is kept here:
records are written with fixed separators and key order, every zip entry carries the same date
and permissions, and nothing in the archive says when or on which machine it was made. The
archive is written under a temporary name beside its final one and renamed only when complete,
so a crash never leaves a file that looks like an export.

The record's JSON Schema is ``docs/emoexpl/record.schema.json``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from nsmcore.mapper import ABSTENTION_TYPES
from nsmcore.schema import SLOT_NAMES, SLOTS, json_schema

FORMAT = "emoexpl/1"
JSONL_NAME = "emoexpl.jsonl"
MANIFEST_NAME = "manifest.json"
CARD_NAME = "README.md"
TEMP_PREFIX = ".partial-"
# The earliest date a zip can hold: no entry tells when the export ran.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
PROBABILITY_DIGITS = 6


def dumps(record: Any) -> str:
    """One record as its JSONL line (without the newline): compact, key order as built."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def probability(value: float | None) -> float | None:
    """Probabilities rounded so that the same judgement always prints the same digits."""
    return None if value is None else round(float(value), PROBABILITY_DIGITS)


# The record ---------------------------------------------------------------------------------------

Scores = tuple[float, float | None, float | None]  # p_entailment, p_neutral, p_contradiction


@dataclass(frozen=True)
class VerifierMeta:
    model: str
    revision: str
    threshold: float


@dataclass(frozen=True)
class ConstrualData:
    """One gold construal as the record needs it: plain data, ``lines`` the rendered lines of its
    explication, each with its scores (None: never judged, or no verifier)."""

    index: int
    explication: dict[str, str]
    residue: str
    notes: str
    provenance: dict[str, dict[str, Any]]
    label: str
    rule: int | None
    fired: list[str]
    abstention: str
    rule_set_version: str
    lines: list[tuple[Any, Scores | None]]  # (nsmcore.render.Line, scores)


def record(
    *, source: str, source_id: str, text: str, masked_text: str, premise_field: str, reference_label: str,
    tiers: list[tuple[str, str]], round_name: str, pivotal_slots: list[str],
    construals: list[ConstrualData], verifier: VerifierMeta | None,
) -> dict[str, Any]:  # fmt: skip
    """One EmoExpl record (``record_schema()``), from plain data: the one definition of what a
    record holds. ``tiers`` are (tier, item set name) pairs. A line is entailed when its
    p(entailment) >= the verifier's threshold; a construal's item score is entailed / scored
    lines, the item's over all its construals (None when no line was scored)."""
    meta = {
        "verifier_model": verifier.model if verifier else None,
        "verifier_revision": verifier.revision if verifier else None,
        "threshold": verifier.threshold if verifier else None,
    }
    out, all_scored, all_entailed = [], 0, 0
    for c in construals:
        lines, scored, entailed = [], 0, 0
        for line, scores in c.lines:
            if scores is None or verifier is None:
                judged = {"p_entailment": None, "p_neutral": None, "p_contradiction": None, "entailed": None}
            else:
                p_e, p_n, p_c = scores
                hit = p_e >= verifier.threshold
                scored, entailed = scored + 1, entailed + hit
                judged = {
                    "p_entailment": probability(p_e),
                    "p_neutral": probability(p_n),
                    "p_contradiction": probability(p_c),
                    "entailed": hit,
                }
            lines.append({"slot": line.slot, "value": line.value, "text": line.text, **judged, **meta})
        all_scored, all_entailed = all_scored + scored, all_entailed + entailed
        out.append(
            {
                "index": c.index,
                "explication": {name: c.explication[name] for name in SLOT_NAMES},
                "residue": c.residue,
                "notes": c.notes,
                "provenance": {name: c.provenance[name] for name in SLOT_NAMES if name in c.provenance},
                "routing": {
                    "label": c.label,
                    "rule": c.rule,
                    "fired": c.fired,
                    "abstention": c.abstention or None,
                    "rule_set_version": c.rule_set_version,
                },
                "lines": lines,
                "item_score": entailed / scored if scored else None,
            }
        )
    return {
        "id": f"{source}:{source_id}",
        "source": source,
        "source_id": source_id,
        "text": text,
        "masked_text": masked_text,
        "premise_field": premise_field,
        "reference_label": reference_label,
        "tiers": [{"tier": tier, "item_set": name} for tier, name in sorted(tiers)],
        "round": round_name,
        "pivotal_slots": pivotal_slots,
        "construals": out,
        "item_score": all_entailed / all_scored if all_scored else None,
    }


# Deflate level 3: about as fast as level 1 and a seventh smaller on EmoExpl JSONL; level 6
# (zipfile's default) takes 2.5x as long, which would make compression the export's bottleneck.
COMPRESS_LEVEL = 3


def _info(name: str, level: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    # ZipFile's own level reaches only entries it names itself, never a ZipInfo it is given
    # (Python 3.11 to 3.13 keep it in this attribute).
    info._compresslevel = level
    info.external_attr = 0o644 << 16
    info.create_system = 3  # unix, whatever machine writes it
    return info


class _HashingWriter(io.RawIOBase):
    """Counts and hashes what goes through to the zip entry."""

    def __init__(self, target: BinaryIO):
        self.target = target
        self.sha256 = hashlib.sha256()
        self.bytes = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.sha256.update(data)
        self.bytes += len(data)
        return self.target.write(data)


class _Pipe:
    """Text in, UTF-8 bytes written to ``target`` by a worker thread, in order, in blocks of
    about ``buffer`` characters (at most four blocks waiting, so memory stays bounded)."""

    def __init__(self, target: Any, buffer: int):
        self.target = target
        self.buffer = buffer
        self.parts: list[str] = []
        self.size = 0
        self.queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="emoexpl-writer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (block := self.queue.get()) is not None:
            if self.error is None:
                try:
                    self.target.write(block)
                except BaseException as error:  # handed to the writing thread
                    self.error = error

    def write(self, text: str) -> int:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= self.buffer:
            self._send()
        return len(text)

    def write_many(self, texts: list[str]) -> None:
        """Several pieces at once (cheaper than joining them first)."""
        self.parts.extend(texts)
        self.size += sum(map(len, texts))
        if self.size >= self.buffer:
            self._send()

    def _send(self) -> None:
        if self.error is not None:
            raise self.error
        if self.parts:
            self.queue.put("".join(self.parts).encode("utf-8"))
            self.parts, self.size = [], 0

    def close(self) -> None:
        try:
            self._send()
        finally:
            self.queue.put(None)
            self.thread.join()
        if self.error is not None:
            raise self.error


class ArchiveWriter:
    """A deterministic zip being written. Entries are added in the order the caller chooses."""

    def __init__(self, file: BinaryIO, *, compresslevel: int = COMPRESS_LEVEL):
        self.level = compresslevel
        self.zip = zipfile.ZipFile(file, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=compresslevel)
        self.files: dict[str, dict[str, Any]] = {}

    @contextmanager
    def stream(self, name: str, *, buffer: int = 1 << 20) -> Iterator[Any]:
        """A text stream into one entry; its sha256 and size are in ``files`` once closed.
        Compression and hashing run in a second thread (zlib and hashlib release the GIL), so
        building the text and compressing it overlap."""
        with self.zip.open(_info(name, self.level), "w", force_zip64=True) as raw:
            hashing = _HashingWriter(raw)
            pipe = _Pipe(hashing, buffer)
            try:
                yield pipe
            finally:
                pipe.close()
        self.files[name] = {"sha256": hashing.sha256.hexdigest(), "bytes": hashing.bytes}

    def add(self, name: str, data: str | bytes) -> None:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.zip.writestr(_info(name, self.level), raw)
        self.files[name] = {"sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}

    def close(self) -> None:
        self.zip.close()


class PendingArchive:
    """An archive being written under a temporary name; set ``name`` before the block ends."""

    def __init__(self, writer: ArchiveWriter, temp: Path):
        self.writer = writer
        self.temp = temp
        self.name = ""
        self.path: Path | None = None  # the final path, once renamed


@contextmanager
def atomic_archive(folder: Path, *, tag: str = "") -> Iterator[PendingArchive]:
    """Write an archive under a hidden temporary name in ``folder`` and rename it to
    ``pending.name`` only when the block ends without an error (the name may depend on the
    content, so it is chosen last). On an error the temporary file is removed; a killed process
    leaves only the temporary file, which no listing shows and ``remove_partials`` clears."""
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f"{TEMP_PREFIX}{tag or os.getpid()}.zip"
    try:
        with temp.open("wb") as file:
            pending = PendingArchive(ArchiveWriter(file), temp)
            try:
                yield pending
                if not pending.name or "/" in pending.name or pending.name.startswith("."):
                    raise ValueError(f"an archive needs a plain file name, not {pending.name!r}")
                pending.writer.close()
            except BaseException:
                with suppress(ValueError, OSError):
                    pending.writer.close()
                raise
            file.flush()
            os.fsync(file.fileno())
        pending.path = folder / pending.name
        os.replace(temp, pending.path)
    finally:
        temp.unlink(missing_ok=True)


def remove_partials(folder: Path, tag: str = "") -> list[Path]:
    """Remove what interrupted writes left in ``folder`` (those of one tag, or all)."""
    if not folder.is_dir():
        return []
    removed = []
    for path in folder.glob(f"{TEMP_PREFIX}{tag}*"):
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _alpha(value: float | None) -> str:
    return "undefined (no variation)" if value is None else f"{value:.3f}"


def dataset_card(manifest: dict[str, Any]) -> str:
    """The dataset card (markdown) from the manifest: counts per tier and label, agreement per
    slot, conventions, rule set, verifier and how to cite."""
    counts = manifest["counts"]
    checked = (
        "every rendered line checked against the text by an NLI model."
        if manifest["verifier"]
        else "rendered lines not checked against the text (this export was made without verification)."
    )
    lines = [
        f"# {manifest['name']}",
        "",
        "Natural Semantic Metalanguage explications of emotion event descriptions: one gold",
        "explication per item (or two, with the slots that tell them apart), every slot with its",
        "provenance, routed to an emotion label or a typed abstention by a fixed decision list, and",
        checked,
        "",
        f"- Scope: {manifest['scope']}",
        f"- Records: {counts['items']} items, {counts['construals']} explications, {counts['lines']} lines",
        f"- Format: `{manifest['format']}`; one JSON record per line of `{JSONL_NAME}`, described by",
        "  the JSON Schema `record.schema.json` of the software's documentation",
        f"- `{JSONL_NAME}` sha256: `{manifest['files'][JSONL_NAME]['sha256']}`",
        f"- Gold as of: {manifest['gold_as_of'] or 'no change recorded'}",
        f"- Software: nsm-explications {manifest['software_version']}",
        f"- Rendered lines: renderer version {manifest.get('renderer_version', 'not recorded')}",
        "",
        "## Items per evidence tier",
        "",
        *_table(
            ("tier", "item set", "items"), [(t["tier"], t["item_set"], t["items"]) for t in counts["tiers"]]
        ),
        "",
        "## Items per label",
        "",
        *_table(
            ("label", "reference (prompted)", "routed (gold)"),
            [(label, n["reference"], n["routed"]) for label, n in counts["labels"].items()],
        ),
        "",
        f"Abstentions: {counts['abstentions'] or 'none'}.",
        "",
        "## Agreement per slot (Krippendorff's alpha, nominal)",
        "",
    ]
    agreement = manifest["agreement"]
    if agreement:
        slots = list(next(iter(agreement.values()))["alpha"])
        lines += _table(
            ("round", "coders", *slots),
            [(name, a["coders"], *(_alpha(a["alpha"][s]) for s in slots)) for name, a in agreement.items()],
        )
    else:
        lines.append("No round with two or more annotators.")
    lines += ["", "## Conventions", ""]
    conventions = manifest["conventions"]
    if conventions:
        lines += [
            f"- {c['label']} ({c['slot']}: {c['value_a']} vs {c['value_b']} -> {c['chosen']}): {c['rule']}"
            for c in conventions
        ]
    else:
        lines.append("None accepted.")
    rules = manifest["rule_set"]
    verifier = manifest["verifier"]
    lines += [
        "",
        "## Rule set",
        "",
        f"Version {rules['version']}, content hash `{rules['hash']}` ({rules['rules']} rules).",
        "",
        "## Verifier",
        "",
    ]
    if verifier:
        lines.append(
            f"`{verifier['model']}` at revision `{verifier['revision']}`; a line is entailed when "
            f"p(entailment) >= {verifier['threshold']}; the item score is entailed lines / lines."
        )
    else:
        lines.append("Not verified: the lines carry no entailment judgement in this export.")
    lines += [
        "",
        "## How to cite",
        "",
        "Cite the explication pathway and this release:",
        "",
        "```",
        manifest["citation"],
        "```",
        "",
    ]
    return "\n".join(lines)


def record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one EmoExpl record, built from the slot schema so the
    two cannot drift apart. ``docs/emoexpl/record.schema.json`` is this, written out by
    ``python -m nsmcore emoexpl-schema``."""
    number = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
    provenance = {
        "type": "object",
        "properties": {
            "source": {"enum": ["unanimous", "convention", "adjudicated"]},
            "convention": {"type": "integer", "description": "the convention's number"},
            "version": {"type": "integer", "description": "the convention's version"},
            "by": {"type": "string", "description": "who adjudicated the slot or applied the convention"},
        },
        "required": ["source"],
    }
    line = {
        "type": "object",
        "properties": {
            "slot": {"enum": list(SLOT_NAMES)},
            "value": {"type": "string"},
            "text": {"type": "string", "minLength": 1, "description": "the rendered prime-language line"},
            "p_entailment": number,
            "p_neutral": number,
            "p_contradiction": number,
            "entailed": {"type": ["boolean", "null"], "description": "p_entailment >= threshold"},
            "verifier_model": {"type": ["string", "null"]},
            "verifier_revision": {"type": ["string", "null"]},
            "threshold": number,
        },
        "required": [
            "slot", "value", "text", "p_entailment", "p_neutral", "p_contradiction", "entailed",
            "verifier_model", "verifier_revision", "threshold",
        ],
        "additionalProperties": False,
    }  # fmt: skip
    construal = {
        "type": "object",
        "properties": {
            "index": {"enum": [1, 2]},
            "explication": json_schema(),
            "residue": {"type": "string"},
            "notes": {"type": "string"},
            "provenance": {
                "type": "object",
                "properties": {slot.name: provenance for slot in SLOTS},
                "additionalProperties": False,
            },
            "routing": {
                "type": "object",
                "properties": {
                    "label": {"type": "string", "description": "the routed emotion, or abstain"},
                    "rule": {"type": ["integer", "null"], "minimum": 1},
                    "fired": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "every rule whose condition holds, by emotion",
                    },
                    "abstention": {"enum": [*ABSTENTION_TYPES, None]},
                    "rule_set_version": {"type": "string"},
                },
                "required": ["label", "rule", "fired", "abstention", "rule_set_version"],
                "additionalProperties": False,
            },
            "lines": {"type": "array", "items": line},
            "item_score": {**number, "description": "entailed lines / lines of this explication"},
        },
        "required": [
            "index",
            "explication",
            "residue",
            "notes",
            "provenance",
            "routing",
            "lines",
            "item_score",
        ],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/nsm-explications/emoexpl/record.schema.json",
        "title": "EmoExpl record",
        "description": f"One gold item of an EmoExpl export ({FORMAT}), one per line of {JSONL_NAME}.",
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "source:source_id"},
            "source": {"type": "string"},
            "source_id": {"type": "string"},
            "text": {"type": "string"},
            "masked_text": {"type": "string"},
            "premise_field": {
                "enum": ["text", "masked_text"],
                "description": "the field annotators read and the verifier checked the lines against",
            },
            "reference_label": {"type": "string", "description": "the prompted emotion"},
            "tiers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"tier": {"type": "string"}, "item_set": {"type": "string"}},
                    "required": ["tier", "item_set"],
                    "additionalProperties": False,
                },
            },
            "round": {"type": "string"},
            "pivotal_slots": {"type": "array", "items": {"enum": list(SLOT_NAMES)}},
            "construals": {"type": "array", "items": construal, "minItems": 1, "maxItems": 2},
            "item_score": {**number, "description": "entailed lines / lines, over every explication"},
        },
        "required": [
            "id", "source", "source_id", "text", "masked_text", "premise_field", "reference_label", "tiers",
            "round", "pivotal_slots", "construals", "item_score",
        ],
        "additionalProperties": False,
    }  # fmt: skip
