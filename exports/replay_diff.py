"""What a replay found different, by item, slot and field (exports.replay): between one record of
the published archive and the rebuilt one, between the two manifests, and between the other files.
Plain data; the list kept is bounded (``Differences.limit``), the count is not."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nsmcore.schema import SLOT_NAMES

ABSENT = "absent"
PRESENT = "present"
UNRESOLVED = None


@dataclass(frozen=True)
class Difference:
    """One difference: ``item`` the record's id (``source:source_id``; empty for the archive's
    other parts), ``construal`` its index (None: the item's), ``slot`` the slot (empty: none),
    ``field`` what differs (``explication``, ``provenance``, ``routing.label``, ``lines``,
    ``record``, ``manifest.counts.items``, ``file README.md`` ...), and each side's value."""

    item: str
    field: str
    archive: Any
    replay: Any
    slot: str = ""
    construal: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item, "construal": self.construal, "slot": self.slot, "field": self.field,
            "archive": self.archive, "replay": self.replay,
        }  # fmt: skip

    @property
    def where(self) -> str:
        parts = [self.item or "archive"]
        if self.construal is not None:
            parts.append(f"construal {self.construal}")
        if self.slot:
            parts.append(self.slot)
        return " / ".join(parts)

    @property
    def archive_shown(self) -> str:
        return _short(self.archive)

    @property
    def replay_shown(self) -> str:
        return _short(self.replay)

    @property
    def text(self) -> str:
        return f"{self.where}: {self.field}: archive {_short(self.archive)}, replay {_short(self.replay)}"


def _short(value: Any, limit: int = 120) -> str:
    text = "unresolved" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Differences:
    """The differences found, the first ``limit`` kept; ``total`` counts them all and ``items``
    the records with one."""

    limit: int = 200
    kept: list[Difference] = field(default_factory=list)
    total: int = 0
    items: int = 0

    def add(self, difference: Difference) -> None:
        self.total += 1
        if len(self.kept) < self.limit:
            self.kept.append(difference)

    def add_record(self, found: list[Difference]) -> None:
        if found:
            self.items += 1
            for d in found:
                self.add(d)


# Records -----------------------------------------------------------------------------------------

_ITEM_FIELDS = (
    "id", "source", "source_id", "text", "masked_text", "premise_field", "reference_label", "tiers", "round",
    "pivotal_slots", "item_score",
)  # fmt: skip
_ROUTING = ("label", "rule", "fired", "abstention", "rule_set_version")


def record_differences(key: str, archive: dict[str, Any], replay: dict[str, Any]) -> list[Difference]:
    """Every field in which two records of one item differ, slot by slot."""
    out = [Difference(key, name, archive.get(name), replay.get(name)) for name in _ITEM_FIELDS
           if archive.get(name) != replay.get(name)]  # fmt: skip
    mine = {c.get("index"): c for c in archive.get("construals") or [] if isinstance(c, dict)}
    theirs = {c.get("index"): c for c in replay.get("construals") or [] if isinstance(c, dict)}
    for index in sorted(set(mine) | set(theirs), key=str):
        a, b = mine.get(index), theirs.get(index)
        if a is None or b is None:
            out.append(Difference(key, "construal", PRESENT if a else ABSENT, PRESENT if b else ABSENT,
                                  construal=index))  # fmt: skip
            continue
        out += construal_differences(key, index, a, b)
    extra = set(archive) ^ set(replay)
    for name in sorted(extra - {"construals"}):
        out.append(Difference(key, name, archive.get(name, ABSENT), replay.get(name, ABSENT)))
    return out


def construal_differences(key: str, index: Any, a: dict[str, Any], b: dict[str, Any]) -> list[Difference]:
    out = []
    for part in ("explication", "provenance"):
        x, y = a.get(part) or {}, b.get(part) or {}
        for slot in SLOT_NAMES:
            if x.get(slot) != y.get(slot):
                out.append(Difference(key, part, x.get(slot), y.get(slot), slot=slot, construal=index))
    for name in ("residue", "notes", "item_score"):
        if a.get(name) != b.get(name):
            out.append(Difference(key, name, a.get(name), b.get(name), construal=index))
    x, y = a.get("routing") or {}, b.get("routing") or {}
    for name in _ROUTING:
        if x.get(name) != y.get(name):
            out.append(Difference(key, f"routing.{name}", x.get(name), y.get(name), construal=index))
    lines_a, lines_b = _by_slot(a.get("lines")), _by_slot(b.get("lines"))
    for slot in [*SLOT_NAMES, *sorted(set(lines_a) | set(lines_b) - set(SLOT_NAMES))]:
        if lines_a.get(slot) != lines_b.get(slot):
            out.append(
                Difference(key, "lines", lines_a.get(slot), lines_b.get(slot), slot=slot, construal=index)
            )
    return out


def _by_slot(lines: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for line in lines or []:
        slot = line.get("slot", "") if isinstance(line, dict) else ""
        out.setdefault(str(slot), []).append(line)
    return out


def unresolved_differences(
    key: str, archive: dict[str, Any], slots: dict[str, Any] | None
) -> list[Difference]:
    """A record the archive holds that the history does not resolve by then: each slot of its
    first construal whose value the history gives otherwise (None: unresolved), or the record
    itself when the history had not opened it."""
    if slots is None:
        return [Difference(key, "record", PRESENT, ABSENT)]
    first = next((c for c in archive.get("construals") or [] if c.get("index") == 1), {})
    given = first.get("explication") or {}
    out = [Difference(key, "explication", given.get(s), slots.get(s), slot=s, construal=1)
           for s in SLOT_NAMES if given.get(s) != slots.get(s)]  # fmt: skip
    return out or [Difference(key, "record", PRESENT, ABSENT)]


# Manifests and files -----------------------------------------------------------------------------


def flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """A JSON value as path -> leaf (objects by key, arrays by position)."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out |= flat(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, list) and value:
        out = {}
        for k, v in enumerate(value):
            out |= flat(v, f"{prefix}[{k}]")
        return out
    return {prefix: value}


def manifest_differences(archive: dict[str, Any], replay: dict[str, Any]) -> list[Difference]:
    a, b = flat(archive, "manifest"), flat(replay, "manifest")
    return [Difference("", path, a.get(path, ABSENT), b.get(path, ABSENT))
            for path in sorted(set(a) | set(b)) if a.get(path, ABSENT) != b.get(path, ABSENT)]  # fmt: skip


def text_difference(name: str, archive: bytes, replay: bytes) -> Difference | None:
    """Two versions of a text file: the first line that differs, or None when equal."""
    if archive == replay:
        return None
    a = archive.decode("utf-8", "replace").splitlines()
    b = replay.decode("utf-8", "replace").splitlines()
    for number, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x != y:
            return Difference("", f"file {name} line {number}", x, y)
    number = min(len(a), len(b)) + 1
    return Difference("", f"file {name} line {number}", a[number - 1] if len(a) >= number else ABSENT,
                      b[number - 1] if len(b) >= number else ABSENT)  # fmt: skip


def contrast_differences(archive: bytes, replay: bytes) -> list[Difference]:
    """The contrast splits pair by pair (by their ids), each pair under the item it was written from."""
    if archive == replay:
        return []

    def pairs(data: bytes) -> dict[str, dict[str, Any]]:
        out = {}
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            try:
                row = json.loads(line)
            except ValueError:
                row = {"id": f"line {number}", "unreadable": line[:200]}
            out[str(row.get("id", f"line {number}"))] = row
        return out

    a, b = pairs(archive), pairs(replay)
    out = []
    for pair in sorted(set(a) | set(b)):
        x, y = a.get(pair), b.get(pair)
        if x != y:
            row = x or y or {}
            item = f"{row.get('source', '')}:{row.get('source_id', '')}"
            out.append(Difference(item, f"contrast {pair}", x if x else ABSENT, y if y else ABSENT))
    return out or [Difference("", "file contrast.jsonl", "bytes", "other bytes")]
