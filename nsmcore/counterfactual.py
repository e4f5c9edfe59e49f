"""The counterfactual benchmark (SPEC section 6): pairs (x, x') with an edit family, target
slots and expected emotions (e, e'), scored from a parser's explications of both texts: slot,
label, clean and causal rates per family and overall.

An *invariance pair* names no target slot: x' rewrites x so that nothing should change, and both
sides expect the same emotion (e = e'). For it, slot and clean both mean that the parser changed
no slot (the intended flip of no slot is vacuous), and label that both sides route to e."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nsmcore.evaluation_report import EvaluationError, Evidence, Proportion, value_text
from nsmcore.legality import check
from nsmcore.mapper import RuleSet, load_rule_set, route_batch
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES

# Counterfactual benchmark ----------------------------------------------------------------------


@dataclass(frozen=True)
class CounterfactualPair:
    """One benchmark pair: texts x and x' (x' rewrites x to flip ``target_slots``), the emotions
    e and e' they should route to, and a parser's explications of both (None: unreadable).
    ``target_values`` optionally pins each target slot's value in x and x'."""

    id: str
    family: str
    target_slots: tuple[str, ...]
    expected: str
    expected_prime: str
    explication: Any
    explication_prime: Any
    target_values: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def invariance(self) -> bool:
        """No target slot: nothing should change between x and x'."""
        return not self.target_slots


def read_pair(obj: Any, where: str, rule_set: RuleSet | None = None) -> CounterfactualPair:
    """A pair from its JSON form (docs/evaluation.md); EvaluationError naming ``where``.

    ``{"id", "family", "target_slots": [...], "target_values"?: {slot: [v, v']},
    "x": {"text", "emotion", "explication"}, "x_prime": {...}}``; ``target_slots`` may be empty
    only for an invariance pair, whose two sides expect the same emotion."""
    labels = (rule_set or load_rule_set()).emotions
    if not isinstance(obj, Mapping):
        raise EvaluationError(f"{where}: expected a JSON object")
    for key in ("id", "family"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            raise EvaluationError(f"{where}: {key!r} must be a non-empty string")
    slots = obj.get("target_slots")
    if (
        not isinstance(slots, list)
        or (not slots and not _same_emotion(obj))
        or not all(isinstance(s, str) and s in SLOT_BY_NAME for s in slots)
    ):
        raise EvaluationError(
            f"{where}: 'target_slots' must be a non-empty list of slots "
            f"({', '.join(SLOT_NAMES)}), or empty for an invariance pair (x and x_prime with one "
            f"emotion), got {slots!r}"
        )
    sides = []
    for side in ("x", "x_prime"):
        value = obj.get(side)
        if not isinstance(value, Mapping):
            raise EvaluationError(f"{where}: {side!r} must be an object with text, emotion and explication")
        emotion = value.get("emotion")
        if emotion not in labels:
            raise EvaluationError(f"{where}: {side}.emotion {emotion!r} is not one of: {', '.join(labels)}")
        if "explication" not in value:
            raise EvaluationError(f"{where}: {side} has no explication (parse its text first)")
        sides.append((emotion, value["explication"]))
    raw_values = obj.get("target_values") or {}
    target_values: dict[str, tuple[str, str]] = {}
    if not isinstance(raw_values, Mapping):
        raise EvaluationError(f"{where}: 'target_values' must be an object {{slot: [value, value']}}")
    for slot, pair in raw_values.items():
        if slot not in slots or not isinstance(pair, list) or len(pair) != 2:
            raise EvaluationError(
                f"{where}: target_values[{slot!r}] must be [value, value'] of a target slot"
            )
        bad = [v for v in pair if v not in SLOT_BY_NAME[slot].values]
        if bad:
            raise EvaluationError(
                f"{where}: target_values[{slot!r}]: {bad[0]!r} is not one of "
                f"{', '.join(SLOT_BY_NAME[slot].values)}"
            )
        target_values[slot] = (pair[0], pair[1])
    return CounterfactualPair(
        obj["id"],
        obj["family"],
        tuple(slots),
        sides[0][0],
        sides[1][0],
        sides[0][1],
        sides[1][1],
        target_values,
    )


def _same_emotion(obj: Mapping[str, Any]) -> bool:
    """Whether both sides of a pair's JSON form name one emotion (an invariance pair's)."""
    x, x_prime = obj.get("x"), obj.get("x_prime")
    if not isinstance(x, Mapping) or not isinstance(x_prime, Mapping):
        return False
    return x.get("emotion") is not None and x.get("emotion") == x_prime.get("emotion")


@dataclass(frozen=True)
class PairOutcome:
    """One pair as a parser did on it: the labels both sides routed to, and the four tests."""

    id: str
    family: str
    label_x: str
    label_x_prime: str
    slot: bool
    label: bool
    clean: bool

    @property
    def causal(self) -> bool:
        return self.slot and self.label and self.clean

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "family": self.family,
            "routed": [self.label_x, self.label_x_prime],
            "slot": self.slot,
            "label": self.label,
            "clean": self.clean,
            "causal": self.causal,
        }


def pair_outcomes(pairs: Sequence[CounterfactualPair], rule_set: RuleSet | None = None) -> list[PairOutcome]:
    """Each pair's routed labels and its slot, label and clean tests (what :func:`counterfactual`
    counts). A pair whose explication on either side is unreadable or illegal flips nothing and
    is not clean; its label test reads the abstention it routes to."""
    rule_set = rule_set or load_rule_set()
    for pair in pairs:
        if pair.invariance and pair.expected != pair.expected_prime:
            raise EvaluationError(
                f"pair {pair.id!r}: an invariance pair (no target slots) expects one emotion on both "
                f"sides, not {pair.expected!r} and {pair.expected_prime!r}"
            )
    routings = route_batch([o for p in pairs for o in (p.explication, p.explication_prime)], rule_set)
    outcomes: list[PairOutcome] = []
    for i, pair in enumerate(pairs):
        before, after = routings[2 * i], routings[2 * i + 1]
        label = before.label == pair.expected and after.label == pair.expected_prime
        a, a_problems = check(pair.explication)
        b, b_problems = check(pair.explication_prime)
        slot = clean = False
        if a is not None and b is not None and not a_problems and not b_problems:
            clean = all(getattr(a, s) == getattr(b, s) for s in SLOT_NAMES if s not in pair.target_slots)
            if pair.invariance:  # the intended flip of no slot: that none changed
                slot = clean
            else:
                slot = all(
                    getattr(a, s) != getattr(b, s)
                    and (
                        s not in pair.target_values
                        or (getattr(a, s), getattr(b, s)) == tuple(pair.target_values[s])
                    )
                    for s in pair.target_slots
                )
        outcomes.append(PairOutcome(pair.id, pair.family, before.label, after.label, slot, label, clean))
    return outcomes


@dataclass(frozen=True)
class FamilyRow:
    """slot: the parser flips every target slot; label: g(f(x)) = e and g(f(x')) = e'; clean: no
    non-target slot changed; causal: all three."""

    family: str
    target_slots: tuple[str, ...]
    slot: Proportion
    label: Proportion
    clean: Proportion
    causal: Proportion

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "target_slots": list(self.target_slots),
            "n": self.slot.n,
            "slot": self.slot.to_dict(),
            "label": self.label.to_dict(),
            "clean": self.clean.to_dict(),
            "causal": self.causal.to_dict(),
        }


@dataclass(frozen=True)
class CounterfactualReport:
    evidence: Evidence
    families: tuple[FamilyRow, ...]
    overall: FamilyRow

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": self.evidence.to_dict(),
            "families": [f.to_dict() for f in self.families],
            "overall": self.overall.to_dict(),
        }


def counterfactual(
    pairs: Sequence[CounterfactualPair],
    rule_set: RuleSet | None = None,
    *,
    tier: str,
    pass_name: str,
    confidence: float = 0.95,
) -> CounterfactualReport:
    """Slot, label, clean and causal rates per edit family and overall (invariance pairs: see
    the module's note)."""
    rule_set = rule_set or load_rule_set()
    if not pairs:
        raise EvaluationError("no counterfactual pairs")
    evidence = Evidence(tier, len(pairs), rule_set.version, rule_set.content_hash, pass_name)
    outcomes = [(o.family, o.slot, o.label, o.clean) for o in pair_outcomes(pairs, rule_set)]

    def row(family: str, slots: tuple[str, ...], chosen: list[tuple[str, bool, bool, bool]]) -> FamilyRow:
        total = len(chosen)

        def rate(hits: int) -> Proportion:
            return Proportion.of(hits, total, confidence)

        return FamilyRow(
            family,
            slots,
            rate(sum(o[1] for o in chosen)),
            rate(sum(o[2] for o in chosen)),
            rate(sum(o[3] for o in chosen)),
            rate(sum(o[1] and o[2] and o[3] for o in chosen)),
        )

    families = []
    for family in sorted({p.family for p in pairs}):
        slots = tuple(dict.fromkeys(s for p in pairs if p.family == family for s in p.target_slots))
        families.append(row(family, slots, [o for o in outcomes if o[0] == family]))
    return CounterfactualReport(evidence, tuple(families), row("all", (), outcomes))


def counterfactual_text(report: CounterfactualReport) -> list[str]:
    rows = [
        (r.family, " + ".join(r.target_slots) if r.target_slots else "-", r)
        for r in (*report.families, report.overall)
    ]
    # each column as wide as its longest cell, two spaces between columns
    family = max(len("family"), *(len(f) for f, _, _ in rows))
    slots = max(len("target slots"), *(len(s) for _, s, _ in rows))
    figures = "".join(f"  {head:>6}" for head in ("slot", "label", "clean", "causal"))
    out = [f"counterfactual benchmark [{report.evidence.label()}]"]
    out.append(f"  {'family':{family}}  {'target slots':{slots}}  {'n':>5}{figures}")
    for name, slot_list, r in rows:
        out.append(
            f"  {name:{family}}  {slot_list:{slots}}  {r.slot.n:5}"
            + "".join(f"  {value_text(p, 2):>6}" for p in (r.slot, r.label, r.clean, r.causal))
        )
    return out
