"""The Emotion Explication Schema (EES): twelve slots with closed value sets.

An explication is the twelve-slot assignment plus two free-text fields, ``residue`` (what the
primes cannot express) and ``notes``. Parsing is strict: every slot must be present with a value
from its set, and unknown keys are refused, so a typo never silently becomes a default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

GROUPS: tuple[str, ...] = ("event", "appraisal", "expression")


@dataclass(frozen=True)
class Slot:
    name: str
    group: str
    values: tuple[str, ...]
    default: str
    # Values that say "nothing stated": the slot renders no line for them.
    inactive: tuple[str, ...] = ()

    def index(self, value: str) -> int:
        return self.values.index(value)


SLOTS: tuple[Slot, ...] = (
    Slot("experiencer", "event", ("i", "someone", "people"), "i"),
    Slot(
        "trigger",
        "event",
        ("something-happened", "someone-did-something", "nothing", "none"),
        "none",
        ("none",),
    ),
    Slot("agency", "event", ("i", "someone-else", "no-one", "none"), "none", ("none",)),
    Slot(
        "realization",
        "event",
        ("happened", "not-happened", "can", "not-can", "maybe", "none"),
        "none",
        ("none",),
    ),
    Slot("time_direction", "event", ("before-now", "now", "after-now"), "before-now"),
    Slot("want", "appraisal", ("want", "not-want", "none"), "none", ("none",)),
    Slot("evaluation", "appraisal", ("feel-good", "feel-bad", "neither"), "neither"),
    Slot(
        "eval_target",
        "appraisal",
        ("self", "other", "event", "object", "none"),
        "none",
        ("none",),
    ),
    Slot("knowledge", "appraisal", ("know", "not-know", "maybe-know", "none"), "none", ("none",)),
    Slot("others_know", "expression", ("can-know", "none"), "none", ("none",)),
    Slot("body", "expression", ("yes", "no"), "no", ("no",)),
    Slot("intensity", "expression", ("very", "plain", "small"), "plain", ("plain",)),
)

SLOT_NAMES: tuple[str, ...] = tuple(s.name for s in SLOTS)
SLOT_BY_NAME: dict[str, Slot] = {s.name: s for s in SLOTS}
TEXT_FIELDS: tuple[str, ...] = ("residue", "notes")

# The paper's rule table writes `someone-did` for `someone-did-something`. Accepted on input only.
VALUE_ALIASES: dict[str, dict[str, str]] = {
    "trigger": {"someone-did": "someone-did-something"},
}

SPACE_SIZE: int = math.prod(len(s.values) for s in SLOTS)


@dataclass(frozen=True)
class SchemaProblem:
    """One reason an object is not a legal explication."""

    slot: str
    message: str
    value: Any = None
    allowed: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"slot": self.slot, "message": self.message}
        if self.value is not None:
            out["value"] = self.value
        if self.allowed:
            out["allowed"] = list(self.allowed)
        return out

    def __str__(self) -> str:
        return f"{self.slot}: {self.message}"


class ExplicationError(ValueError):
    """Raised when an object cannot be read as an explication; carries every problem found."""

    def __init__(self, problems: list[SchemaProblem]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def canonical_value(slot: str, value: str) -> str:
    return VALUE_ALIASES.get(slot, {}).get(value, value)


@dataclass(frozen=True)
class Explication:
    """An immutable twelve-slot assignment with residue and notes."""

    experiencer: str = "i"
    trigger: str = "none"
    agency: str = "none"
    realization: str = "none"
    time_direction: str = "before-now"
    want: str = "none"
    evaluation: str = "neither"
    eval_target: str = "none"
    knowledge: str = "none"
    others_know: str = "none"
    body: str = "no"
    intensity: str = "plain"
    residue: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        problems = [
            _value_problem(name, getattr(self, name))
            for name in SLOT_NAMES
            if getattr(self, name) not in SLOT_BY_NAME[name].values
        ]
        for name in TEXT_FIELDS:
            if not isinstance(getattr(self, name), str):
                problems.append(SchemaProblem(name, "must be a string", getattr(self, name)))
        if problems:
            raise ExplicationError(problems)

    @classmethod
    def from_dict(cls, obj: Any) -> Explication:
        """Read a JSON object; raise ExplicationError naming every bad, unknown or missing key."""
        return cls(**parse_slots(obj))

    def slots(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in SLOT_NAMES}

    def as_dict(self) -> dict[str, str]:
        return {**self.slots(), "residue": self.residue, "notes": self.notes}

    def replace(self, **changes: str) -> Explication:
        return Explication(**{**self.as_dict(), **changes})

    def codes(self) -> tuple[int, ...]:
        """The value index of each slot, in schema order (the batch encoding)."""
        return tuple(slot.index(getattr(self, slot.name)) for slot in SLOTS)


def _value_problem(slot: str, value: Any) -> SchemaProblem:
    allowed = SLOT_BY_NAME[slot].values
    return SchemaProblem(
        slot,
        f"{value!r} is not an allowed value; allowed: {', '.join(allowed)}",
        value,
        allowed,
    )


def validate(obj: Any) -> list[SchemaProblem]:
    """Every problem that keeps ``obj`` from being an explication (empty when it is one)."""
    if not isinstance(obj, Mapping):
        return [SchemaProblem("(object)", f"expected a JSON object, got {type(obj).__name__}")]
    problems: list[SchemaProblem] = []
    for key in obj:
        if key not in SLOT_BY_NAME and key not in TEXT_FIELDS:
            problems.append(
                SchemaProblem(
                    str(key),
                    "unknown key; expected the twelve slots "
                    f"({', '.join(SLOT_NAMES)}) and optionally residue, notes",
                )
            )
    for slot in SLOTS:
        if slot.name not in obj:
            problems.append(
                SchemaProblem(
                    slot.name,
                    f"missing; allowed: {', '.join(slot.values)}",
                    allowed=slot.values,
                )
            )
            continue
        value = obj[slot.name]
        if not isinstance(value, str) or canonical_value(slot.name, value) not in slot.values:
            problems.append(_value_problem(slot.name, value))
    for name in TEXT_FIELDS:
        if name in obj and not isinstance(obj[name], str):
            problems.append(SchemaProblem(name, "must be a string", obj[name]))
    return problems


def parse_slots(obj: Any) -> dict[str, str]:
    """Validated, alias-resolved keyword arguments for :class:`Explication`."""
    problems = validate(obj)
    if problems:
        raise ExplicationError(problems)
    out = {name: canonical_value(name, obj[name]) for name in SLOT_NAMES}
    for name in TEXT_FIELDS:
        out[name] = obj.get(name, "")
    return out


def from_codes(codes: tuple[int, ...] | list[int]) -> Explication:
    return Explication(**{slot.name: slot.values[c] for slot, c in zip(SLOTS, codes, strict=True)})


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of the twelve slots, generated from SLOTS: every slot
    required, values from its set, nothing else allowed. Structured-output servers take it as is."""
    return {
        "type": "object",
        "properties": {slot.name: {"type": "string", "enum": list(slot.values)} for slot in SLOTS},
        "required": list(SLOT_NAMES),
        "additionalProperties": False,
    }
