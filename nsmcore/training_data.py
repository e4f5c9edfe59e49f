"""Training data for the parser: text -> explication pairs from the tool's gold (or chosen
annotator passes), written in the two formats a fine-tuning run reads.

- ``prompt``: one line per (item, slot), exactly what the transformers backend scores: the
  prompt is ``slot_prefix() + slot_suffix(text, slots so far)`` and the completion the value as
  the decoder tokenises it (``" value\\n"``). Training on these lines teaches the decoder the
  very choice it makes (nsmcore.lora puts the loss on the completion's tokens only).
- ``chat``: one line per item, the messages an OpenAI-compatible server is sent
  (``chat_messages``) with the explication's JSON as the assistant's reply: the format common
  fine-tuning tools read, for a model served through the openai backend.

Held-out items never enter training: an item in an evaluation tier (``eval``) is refused, with
every such item named, and nothing is written. Each file is written with a manifest: the data's
hash (independent of the format), the item sets it came from, the rule set, renderer and prompt
versions, and the counts.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nsmcore.legality import check
from nsmcore.parsers.prompt import PROMPT_VERSION, chat_messages, slot_prefix, slot_suffix
from nsmcore.render import RENDERER_VERSION
from nsmcore.schema import SLOT_NAMES

#: evidence tiers that are held out: their items are never training data
HELD_OUT_TIERS = frozenset({"eval"})
FORMATS = ("prompt", "chat", "pairs")
DATA_FORMAT_VERSION = "1"


@dataclass(frozen=True)
class LabelledText:
    """A text with its reference emotion label and, optionally, its appraisal ratings."""

    text: str
    label: str
    appraisals: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""


class TrainingDataError(ValueError):
    """Training data that cannot be made: the message names the items or the problem."""


@dataclass(frozen=True)
class TrainingRecord:
    """One explication of one item, as training data."""

    id: str  # the item's corpus id: what a refusal names
    text: str
    slots: dict[str, str] = field(hash=False)
    source: str = "gold"  # the pass it came from: gold, annotator:<name>
    construal: int = 1

    def key(self) -> list[Any]:
        return [self.id, self.source, self.construal, self.text, [self.slots[n] for n in SLOT_NAMES]]


def _tiers(value: str | Iterable[str]) -> set[str]:
    return {value} if isinstance(value, str) else set(value)


def training_records(
    pairs: Iterable[Mapping[str, Any] | TrainingRecord], *, tiers_of: Mapping[str, str | Iterable[str]]
) -> list[TrainingRecord]:
    """Check pairs (``id``, ``text``, ``explication``, optional ``source`` and ``construal``) and
    return them as records, in a stable order. ``tiers_of`` maps an item id to its tier (or tiers:
    an item may be in several item sets). Raises TrainingDataError naming every held-out item, an
    illegal explication (item and slot), an empty text, or no pairs at all."""
    records: list[TrainingRecord] = []
    problems: list[str] = []
    for pair in pairs:
        if isinstance(pair, TrainingRecord):
            record = pair
        else:
            explication, errors = check(pair.get("explication"))
            item = str(pair.get("id", "?"))
            if errors or explication is None:
                problems.append(f"item {item}: {'; '.join(str(e) for e in errors)}")
                continue
            record = TrainingRecord(
                id=item, text=str(pair.get("text") or ""), slots=explication.slots(),
                source=str(pair.get("source") or "gold"), construal=int(pair.get("construal") or 1),
            )  # fmt: skip
        if not record.text.strip():
            problems.append(f"item {record.id}: empty text")
        records.append(record)
    held_out = sorted({r.id for r in records if _tiers(tiers_of.get(r.id, ())) & HELD_OUT_TIERS})
    if held_out:
        raise TrainingDataError(held_out_message(held_out))
    if problems:
        raise TrainingDataError("; ".join(problems))
    if not records:
        raise TrainingDataError("no training data: no resolved gold or submitted annotations in this scope")
    return sorted(records, key=lambda r: (r.id, r.source, r.construal))


def held_out_message(ids: list[str]) -> str:
    """The refusal, naming every held-out item."""
    return (
        f"{len(ids)} held-out (eval tier) item{'s' if len(ids) != 1 else ''} cannot be training data: "
        f"{', '.join(ids)}"
    )


def data_hash(records: Iterable[TrainingRecord]) -> str:
    """sha256 of the records' content (ids, texts, slots, sources), the same whichever format is
    written: two files with this hash hold the same data."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(json.dumps(record.key(), ensure_ascii=False, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def prompt_rows(records: Iterable[TrainingRecord]) -> list[dict[str, Any]]:
    """Twelve lines per record: the exact prompt the transformers backend scores for each slot,
    and the value it should choose as the completion."""
    prefix = slot_prefix()
    rows = []
    for record in records:
        chosen: dict[str, str] = {}
        for name in SLOT_NAMES:
            rows.append({
                "id": record.id, "source": record.source, "construal": record.construal, "slot": name,
                "prompt": prefix + slot_suffix(record.text, chosen), "completion": f" {record.slots[name]}\n",
            })  # fmt: skip
            chosen[name] = record.slots[name]
    return rows


def chat_rows(records: Iterable[TrainingRecord], *, with_schema: bool = True) -> list[dict[str, Any]]:
    """One line per record: the openai backend's messages and the explication as the reply."""
    return [
        {
            "id": r.id,
            "source": r.source,
            "construal": r.construal,
            "messages": [
                *chat_messages(r.text, with_schema=with_schema),
                {"role": "assistant", "content": json.dumps(r.slots, separators=(", ", ": "))},
            ],
        }
        for r in records
    ]


def training_manifest(
    records: list[TrainingRecord], *, fmt: str, lines: int, meta: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What the data is and where it came from; ``meta`` adds the tool's side (item sets, rule
    set version, the round...)."""
    sources: dict[str, int] = {}
    for r in records:
        sources[r.source] = sources.get(r.source, 0) + 1
    return {
        "format": fmt,
        "data_format_version": DATA_FORMAT_VERSION,
        "data_sha256": data_hash(records),
        "items": len({r.id for r in records}),
        # what an evaluation checks a held-out set against (nsmcore.parsers.trained_item_ids)
        "item_ids": sorted({r.id for r in records}),
        "records": len(records),
        "lines": lines,
        "sources": sources,
        "prompt_version": PROMPT_VERSION,
        "renderer_version": RENDERER_VERSION,
        "held_out_tiers": sorted(HELD_OUT_TIERS),
        **dict(meta or {}),
    }


def pair_rows(records: Iterable[TrainingRecord]) -> list[dict[str, Any]]:
    """One line per record: its id, source, construal, text and twelve slots (what the classifier
    parser reads: ``python -m nsmcore train-classifier --input`` takes these lines as they are)."""
    return [
        {"id": r.id, "source": r.source, "construal": r.construal, "text": r.text, "slots": r.slots}
        for r in records
    ]


def rows_for(records: list[TrainingRecord], fmt: str, *, with_schema: bool = True) -> list[dict[str, Any]]:
    if fmt == "pairs":
        return pair_rows(records)
    if fmt == "prompt":
        return prompt_rows(records)
    if fmt == "chat":
        return chat_rows(records, with_schema=with_schema)
    raise TrainingDataError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")


def jsonl_bytes(rows: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(json.dumps(row, ensure_ascii=False).encode() + b"\n" for row in rows)


def training_files(
    records: list[TrainingRecord],
    fmt: str,
    *,
    meta: Mapping[str, Any] | None = None,
    with_schema: bool = True,
) -> tuple[bytes, dict[str, Any]]:
    """The JSONL's bytes and its manifest (with the file's own sha256)."""
    rows = rows_for(records, fmt, with_schema=with_schema)
    data = jsonl_bytes(rows)
    manifest = training_manifest(records, fmt=fmt, lines=len(rows), meta=meta)
    if fmt == "chat":
        manifest["chat_with_schema"] = with_schema
    manifest["file_sha256"] = hashlib.sha256(data).hexdigest()
    return data, manifest


def manifest_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".manifest.json")


def write_training(
    records: list[TrainingRecord], path: str | Path, fmt: str, *, meta: Mapping[str, Any] | None = None,
    with_schema: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """Write the JSONL at ``path`` and its manifest beside it (``<path>.manifest.json``), each
    atomically: a reader never sees half a file. Returns the manifest."""
    data, manifest = training_files(records, fmt, meta=meta, with_schema=with_schema)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    write_atomic(manifest_path(path), json.dumps(manifest, indent=2, ensure_ascii=False).encode() + b"\n")
    return manifest


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_prompt_rows(path: str | Path) -> list[dict[str, Any]]:
    """The prompt-format lines of a file written by ``write_training`` (for training elsewhere);
    TrainingDataError naming the line that is not one."""
    rows = []
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise TrainingDataError(f"{path} line {number}: not JSON ({error})") from None
            if not isinstance(row, dict) or not {"prompt", "completion"} <= set(row):
                raise TrainingDataError(
                    f"{path} line {number}: a prompt-format line has prompt and completion"
                )
            rows.append(row)
    if not rows:
        raise TrainingDataError(f"{path}: no training lines")
    return rows
