"""The regression suite a rule set must pass before it becomes active (SPEC section 9).

- Canonical self-checks: one prototypical explication per emotion must route to that emotion,
  and named single-slot flips (guilt -> shame through others_know) must land where the paper says.
- Slot-flip consistency: for every single-slot edit of every canonical explication, the label is
  exactly what the rule conditions dictate (checked against a reference evaluation written
  independently of the mapper), single and batch routing agree, and only rules that read the
  edited slot change their truth value. The Causal Consistency Rate must be 1.0.
- Renderer: every slot value's line passes the prime grammar check.

The pilot item set joins the suite when annotated items exist (it needs the app's data).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from nsmcore.grammar import check_line
from nsmcore.mapper import ABSTAIN, RuleSet, load_rule_set, route, route_batch
from nsmcore.render import contexts, lines_in
from nsmcore.schema import SLOTS, Explication


@dataclass
class Section:
    name: str
    checked: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "checked": self.checked, "failures": self.failures}


@dataclass
class SuiteReport:
    rule_set_version: str
    rule_set_hash: str
    sections: list[Section]
    causal_consistency_rate: float

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.sections) and self.causal_consistency_rate == 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "rule_set_version": self.rule_set_version,
            "rule_set_hash": self.rule_set_hash,
            "causal_consistency_rate": self.causal_consistency_rate,
            "sections": [s.as_dict() for s in self.sections],
        }


# A pure memo of data shipped in the package: every process reads the same file.
@cache
def canonical_data() -> dict[str, Any]:
    text = resources.files("nsmcore.data").joinpath("regression", "canonical.json").read_text()
    return json.loads(text)


def canonical_explications() -> dict[str, Explication]:
    return {c["emotion"]: Explication.from_dict(c["explication"]) for c in canonical_data()["canonical"]}


def reference_label(explication: Explication, rule_set: RuleSet) -> str:
    """The first rule whose conditions hold, read straight from the rule set's canonical data."""
    slots = explication.slots()
    for rule in rule_set.canonical()["rules"]:
        if all(slots[s] in values for s, values in rule["conditions"].items()):
            return rule["emotion"]
    return ABSTAIN


def check_canonical(rule_set: RuleSet) -> Section:
    section = Section("canonical self-checks")
    prototypes = canonical_explications()
    for emotion, explication in prototypes.items():
        section.checked += 1
        got = route(explication, rule_set).label
        if got != emotion:
            section.failures.append(f"{emotion} prototype routes to {got}")
    for flip in canonical_data()["flips"]:
        section.checked += 1
        edited = prototypes[flip["base"]].replace(**flip["edit"])
        got = route(edited, rule_set).label
        if got != flip["expect"]:
            section.failures.append(f"{flip['name']}: expected {flip['expect']}, got {got}")
    return section


def single_slot_edits(explication: Explication) -> list[tuple[str, str, Explication]]:
    return [
        (slot.name, value, explication.replace(**{slot.name: value}))
        for slot in SLOTS
        for value in slot.values
        if value != getattr(explication, slot.name)
    ]


def check_slot_flips(rule_set: RuleSet) -> tuple[Section, float]:
    section = Section("slot-flip consistency")
    consistent = 0
    for emotion, base in canonical_explications().items():
        edits = single_slot_edits(base)
        batch = route_batch([edited for _, _, edited in edits], rule_set)
        before = [rule.holds(base) for rule in rule_set.rules]
        for (slot, value, edited), batched in zip(edits, batch, strict=True):
            section.checked += 1
            single = route(edited, rule_set)
            expected = reference_label(edited, rule_set)
            after = [rule.holds(edited) for rule in rule_set.rules]
            changed_without_reading = [
                rule.emotion
                for rule, b, a in zip(rule_set.rules, before, after, strict=True)
                if b != a and slot not in rule.conditions
            ]
            problems = []
            if single.label != expected:
                problems.append(f"routes to {single.label}, conditions say {expected}")
            if batched != single:
                problems.append("batch and single routing disagree")
            if changed_without_reading:
                problems.append(f"rules not reading {slot} changed: {changed_without_reading}")
            if problems:
                section.failures.append(f"{emotion} prototype, {slot}={value}: {'; '.join(problems)}")
            else:
                consistent += 1
    rate = consistent / section.checked if section.checked else 0.0
    return section, rate


def check_renderer() -> Section:
    """Every line the renderer writes, in every context its frames read (version 3: the
    experiencer, trigger, time and want), passes the prime grammar."""
    section = Section("renderer grammar")
    seen: set[str] = set()
    for context in contexts():
        for line in lines_in(context):
            if line.text in seen:
                continue
            seen.add(line.text)
            section.checked += 1
            for message in check_line(line.text):
                section.failures.append(f"{line.slot}={line.value} ({context}): {line.text!r}: {message}")
    return section


def run_suite(rule_set: RuleSet | None = None) -> SuiteReport:
    rule_set = rule_set or load_rule_set()
    flips, rate = check_slot_flips(rule_set)
    return SuiteReport(
        rule_set.version,
        rule_set.content_hash,
        [check_canonical(rule_set), flips, check_renderer()],
        rate,
    )
