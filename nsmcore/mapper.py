"""The definitional mapper g: a versioned, priority-ordered decision list over the twelve slots.

Rule sets are data files (``data/rulesets/v<version>.json``). A rule set has a version, ordered
rules and a content hash over its meaning (alias-resolved conditions in schema order, so a
reworded description or reformatted file keeps its hash, and any change to a condition does not).

Single routing evaluates the conditions directly. Batch routing encodes explications as value
indices and, per slot, looks up the bitmask of rules that slot's value does not exclude; the AND
over the twelve slots is the fired set, and its lowest set bit is the winning rule.

Batch routing imports numpy when it is first called: a process that routes one explication at a
time (the job worker at rest, every process's settings checking the configured rule set) does not
hold it (issue 24's memory goal; tests/app/test_process_imports.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nsmcore.jsonio import JSONTooComplex
from nsmcore.jsonio import loads as read_json
from nsmcore.legality import check
from nsmcore.schema import (
    SLOT_BY_NAME,
    SLOTS,
    Explication,
    SchemaProblem,
    canonical_value,
)

if TYPE_CHECKING:
    import numpy as np

ABSTAIN = "abstain"
ILLEGAL = "illegal"
SCHEMA_RESIDUE = "schema-residue"
NO_RULE = "no-rule"
ABSTENTION_TYPES: tuple[str, ...] = (ILLEGAL, SCHEMA_RESIDUE, NO_RULE)  # in precedence order
DEFAULT_VERSION = "1"
MAX_RULES = 63  # the batch path keeps the fired set in one uint64 per explication


class RuleSetError(ValueError):
    """A rule set file that cannot be used; the message names the rule, slot and value."""


@dataclass(frozen=True)
class Rule:
    emotion: str
    conditions: Mapping[str, frozenset[str]]

    def holds(self, explication: Explication) -> bool:
        return all(getattr(explication, s) in allowed for s, allowed in self.conditions.items())

    def as_dict(self) -> dict[str, Any]:
        return {
            "emotion": self.emotion,
            "conditions": {
                slot.name: [v for v in slot.values if v in self.conditions[slot.name]]
                for slot in SLOTS
                if slot.name in self.conditions
            },
        }


@dataclass(frozen=True)
class RuleSet:
    version: str
    rules: tuple[Rule, ...]
    description: str = ""

    @property
    def emotions(self) -> tuple[str, ...]:
        return tuple(rule.emotion for rule in self.rules)

    def canonical(self) -> dict[str, Any]:
        return {"version": self.version, "rules": [rule.as_dict() for rule in self.rules]}

    @cached_property
    def content_hash(self) -> str:
        """The rule set's one hash, everywhere it is written (reports, manifests, the database, the
        API): sha256 of the rules alone (order, emotions, alias-resolved conditions), whatever the
        version name or description say, so two versions with one hash route every explication
        alike and a report's hash finds its stored version."""
        payload = json.dumps(self.canonical()["rules"], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @cached_property
    def slot_masks(self) -> tuple[np.ndarray, ...]:
        """Per slot, indexed by value index: the bitmask of rules that value leaves possible."""
        import numpy as np

        tables = []
        for slot in SLOTS:
            table = np.zeros(len(slot.values), dtype=np.uint64)
            for v, value in enumerate(slot.values):
                bits = 0
                for k, rule in enumerate(self.rules):
                    allowed = rule.conditions.get(slot.name)
                    if allowed is None or value in allowed:
                        bits |= 1 << k
                table[v] = bits
            tables.append(table)
        return tuple(tables)


@dataclass(frozen=True)
class Routing:
    label: str
    rule_index: int | None
    fired: tuple[str, ...]
    abstention_type: str | None
    rule_set_version: str
    errors: tuple[SchemaProblem, ...] = field(default=())

    @property
    def multi_rule(self) -> bool:
        return len(self.fired) > 1

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "label": self.label,
            "rule_index": self.rule_index,
            "fired": list(self.fired),
            "abstention_type": self.abstention_type,
            "rule_set_version": self.rule_set_version,
        }
        if self.errors:
            out["errors"] = [p.as_dict() for p in self.errors]
        return out


# Loading ---------------------------------------------------------------------------------------


def parse_rule_set(doc: Any, *, source: str = "rule set") -> RuleSet:
    if not isinstance(doc, Mapping):
        raise RuleSetError(f"{source}: expected a JSON object with 'version' and 'rules'")
    version = doc.get("version")
    if not isinstance(version, str) or not version:
        raise RuleSetError(f"{source}: 'version' must be a non-empty string")
    raw_rules = doc.get("rules")
    if not isinstance(raw_rules, list) or not raw_rules:
        raise RuleSetError(f"{source}: 'rules' must be a non-empty list")
    if len(raw_rules) > MAX_RULES:
        raise RuleSetError(f"{source}: {len(raw_rules)} rules; at most {MAX_RULES} are supported")
    rules: list[Rule] = []
    for k, raw in enumerate(raw_rules):
        where = f"{source}: rule {k}"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("emotion"), str):
            raise RuleSetError(f"{where}: expected an object with 'emotion' and 'conditions'")
        emotion = raw["emotion"]
        if emotion in (r.emotion for r in rules) or emotion == ABSTAIN:
            raise RuleSetError(f"{where}: emotion {emotion!r} is repeated or reserved")
        conditions = raw.get("conditions")
        if not isinstance(conditions, Mapping) or not conditions:
            raise RuleSetError(f"{where} ({emotion}): 'conditions' must be a non-empty object")
        parsed: dict[str, frozenset[str]] = {}
        for slot_name, values in conditions.items():
            slot = SLOT_BY_NAME.get(slot_name)
            if slot is None:
                raise RuleSetError(f"{where} ({emotion}): unknown slot {slot_name!r}")
            if not isinstance(values, list) or not values:
                raise RuleSetError(f"{where} ({emotion}): {slot_name} needs a non-empty list")
            resolved = set()
            for value in values:
                canonical = canonical_value(slot_name, value) if isinstance(value, str) else None
                if canonical not in slot.values:
                    raise RuleSetError(
                        f"{where} ({emotion}): {slot_name}={value!r} is not an allowed value; "
                        f"allowed: {', '.join(slot.values)}"
                    )
                resolved.add(canonical)
            parsed[slot_name] = frozenset(resolved)
        rules.append(Rule(emotion, parsed))
    return RuleSet(version, tuple(rules), str(doc.get("description", "")))


def _bundled(version: str) -> str | None:
    resource = resources.files("nsmcore.data").joinpath("rulesets", f"v{version}.json")
    return resource.read_text("utf-8") if resource.is_file() else None


def bundled_versions() -> list[str]:
    folder = resources.files("nsmcore.data").joinpath("rulesets")
    names = [p.name for p in folder.iterdir() if p.name.startswith("v") and p.name.endswith(".json")]
    return sorted((n[1:-5] for n in names), key=lambda v: (len(v), v))


# A pure memo of a rule set shipped in the package (versions never change), so no two processes
# can disagree on it.
@cache
def _load_bundled(version: str) -> RuleSet:
    text = _bundled(version)
    if text is None:
        raise RuleSetError(
            f"no bundled rule set version {version!r}; bundled: {', '.join(bundled_versions())}"
        )
    return parse_rule_set(json.loads(text), source=f"rule set v{version}")


def load_rule_set(spec: str | Path | None = None) -> RuleSet:
    """A bundled version ("1"), or a path to a rule set JSON file; the default version if None."""
    if spec is None:
        return _load_bundled(DEFAULT_VERSION)
    path = Path(spec)
    if path.suffix == ".json" or path.exists():
        try:
            doc = read_json(path.read_text("utf-8"))
        except JSONTooComplex as error:
            raise RuleSetError(f"{path}: {error}") from None
        except FileNotFoundError as error:
            raise RuleSetError(f"{path}: no such file") from error
        except UnicodeDecodeError as error:
            raise RuleSetError(f"{path}: not UTF-8 text (byte at offset {error.start})") from None
        except OSError as error:
            raise RuleSetError(f"{path}: cannot read: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise RuleSetError(f"{path}: not valid JSON ({error})") from error
        return parse_rule_set(doc, source=str(path))
    return _load_bundled(str(spec))


# Routing ---------------------------------------------------------------------------------------


def route(obj: Any, rule_set: RuleSet | None = None) -> Routing:
    """Route one explication (an Explication or a JSON object). Illegal input abstains as
    ``illegal`` with its errors; it never raises."""
    rule_set = rule_set or load_rule_set()
    explication, problems = check(obj)
    if explication is None or problems:
        return Routing(ABSTAIN, None, (), ILLEGAL, rule_set.version, tuple(problems))
    fired_indices = [k for k, rule in enumerate(rule_set.rules) if rule.holds(explication)]
    return _decide(explication, fired_indices, rule_set)


def _decide(explication: Explication, fired_indices: list[int], rule_set: RuleSet) -> Routing:
    fired = tuple(rule_set.rules[k].emotion for k in fired_indices)
    if explication.residue.strip():
        return Routing(ABSTAIN, None, fired, SCHEMA_RESIDUE, rule_set.version)
    if not fired_indices:
        return Routing(ABSTAIN, None, (), NO_RULE, rule_set.version)
    k = fired_indices[0]
    return Routing(rule_set.rules[k].emotion, k, fired, None, rule_set.version)


def encode(explications: Iterable[Explication]) -> np.ndarray:
    """An (n, 12) int8 array of value indices, the batch routing input."""
    import numpy as np

    rows = [e.codes() for e in explications]
    return np.asarray(rows, dtype=np.int8).reshape(len(rows), len(SLOTS))


def fired_masks(codes: np.ndarray, rule_set: RuleSet | None = None) -> np.ndarray:
    """The fired set of each row of ``codes`` as a uint64 bitmask (bit k = rule k)."""
    import numpy as np

    rule_set = rule_set or load_rule_set()
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != len(SLOTS):
        raise ValueError(f"codes must have shape (n, {len(SLOTS)}), got {codes.shape}")
    tables = rule_set.slot_masks
    masks = tables[0][codes[:, 0]]
    for s in range(1, len(SLOTS)):
        masks &= tables[s][codes[:, s]]
    return masks


def first_rule(masks: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of each mask (the winning rule), -1 where none fired."""
    import numpy as np

    masks = np.asarray(masks, dtype=np.uint64)
    lowest = masks & (~masks + np.uint64(1))
    out = np.full(masks.shape, -1, dtype=np.int16)
    nonzero = lowest != 0
    # Powers of two up to 2**63 are exact in float64, so log2 gives the bit position.
    out[nonzero] = np.log2(lowest[nonzero].astype(np.float64)).astype(np.int16)
    return out


def route_codes(codes: np.ndarray, rule_set: RuleSet | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised routing of encoded explications: (winning rule index or -1, fired bitmask)."""
    masks = fired_masks(codes, rule_set)
    return first_rule(masks), masks


def route_batch(objs: Sequence[Any], rule_set: RuleSet | None = None) -> list[Routing]:
    """Route many explications at once; the same answers as :func:`route` on each."""
    import numpy as np

    rule_set = rule_set or load_rule_set()
    # Corpora repeat explications (the space is small): check and route each distinct one once.
    keys = [_memo_key(obj) for obj in objs]
    distinct: dict[Any, int] = {}
    todo: list[Any] = []
    for obj, key in zip(objs, keys, strict=True):
        if key is None or key not in distinct:
            if key is not None:
                distinct[key] = len(todo)
            todo.append(obj)
    checked = [check(obj) for obj in todo]
    legal = [e for e, problems in checked if e is not None and not problems]
    masks = fired_masks(encode(legal), rule_set) if legal else np.zeros(0, dtype=np.uint64)
    routed: list[Routing] = []
    legal_position = 0
    for explication, problems in checked:
        if explication is None or problems:
            routed.append(Routing(ABSTAIN, None, (), ILLEGAL, rule_set.version, tuple(problems)))
            continue
        mask = int(masks[legal_position])
        legal_position += 1
        fired_indices = [k for k in range(len(rule_set.rules)) if mask >> k & 1]
        routed.append(_decide(explication, fired_indices, rule_set))
    out: list[Routing] = []
    position = 0
    for key in keys:
        if key is None or distinct[key] == position:
            out.append(routed[position])
            position += 1
        else:
            out.append(routed[distinct[key]])
    return out


def _memo_key(obj: Any) -> Any:
    if isinstance(obj, Explication):
        return obj
    if isinstance(obj, Mapping) and all(isinstance(v, str) for v in obj.values()):
        return tuple(obj.items())  # the same items in another order only miss the memo
    return None


def popcount(masks: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.bitwise_count(np.asarray(masks, dtype=np.uint64))
