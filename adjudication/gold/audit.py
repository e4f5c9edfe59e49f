"""The audit trail of a gold record, read as per-slot differences: who, when, ``slot: old -> new``
and why, from the GoldChange rows the services write (a selector: it reads, never writes).

The rows keep what each service knew: opening stores the unanimous slots, a convention the one
slot it set and the label, a hand resolution both construals before and after. Replaying them in
order gives each change's "before" where the row did not store it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from adjudication.models import GoldChange, GoldItem
from nsmcore.schema import SLOT_NAMES

OPENED, CONVENTION, ADJUDICATED, RULE_SET = "opened", "convention", "adjudicated", "rule-set"


@dataclass(frozen=True)
class SlotDiff:
    slot: str  # a slot name, or "label"
    old: str | None
    new: str | None
    prefix: str = ""  # which construal, when not the first

    @property
    def text(self) -> str:
        unresolved = _("unresolved")
        old = self.old or (_("none") if self.slot == "label" else unresolved)
        line = f"{self.slot}: {old} -> {self.new or unresolved}"
        return f"{self.prefix}: {line}" if self.prefix else line


@dataclass(frozen=True)
class Note:
    """A change that is not one slot's: a second construal dropped."""

    text: str


@dataclass
class AuditEntry:
    at: Any
    who: str
    kind: str  # opened, convention or adjudicated
    why: str
    diffs: list[SlotDiff | Note] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # slots an opening left open


def _kind_and_why(change: GoldChange) -> tuple[str, str]:
    if change.before is None:
        return OPENED, change.why.removeprefix("opened: ")
    if change.why.startswith("convention "):
        return CONVENTION, change.why.removeprefix("convention ")  # "C1 v1: agency i/someone-else -> i"
    if change.why.startswith("rule set "):  # a revision activated: the label routed again
        return RULE_SET, change.why
    return ADJUDICATED, change.why


def _slot_diffs(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[SlotDiff]:
    return [
        SlotDiff(name, old.get(name), new.get(name), prefix)
        for name in SLOT_NAMES
        if old.get(name) != new.get(name)
    ]


def gold_audit_trail(gold: GoldItem) -> list[AuditEntry]:
    """Every change of ``gold``, newest first, as per-slot differences."""
    changes = gold.changes.select_related("who").order_by("at", "id")
    first: dict[str, Any] = {}
    second: dict[str, Any] | None = None
    label = ""
    out = []
    for change in changes:
        before, after = change.before, change.after or {}
        kind, why = _kind_and_why(change)
        entry = AuditEntry(change.at, change.who.username if change.who else _("the tool"), kind, why)
        if "slots" in after:  # opening, or a hand resolution (which stores both construals)
            old_first = before.get("slots", first) if before else first
            old_second = before.get("second", second) if before and "slots" in before else second
            new_first = after["slots"]
            new_second = after.get("second") if before is not None else None
        else:  # a convention: the slot it set, and the label
            old_first, old_second = first, second
            new_first = {**first, **{k: v for k, v in after.items() if k in SLOT_NAMES}}
            new_second = second
        entry.diffs += _slot_diffs(old_first, new_first)
        new_label = after.get("label") or label
        if new_label != label:
            entry.diffs.append(SlotDiff("label", label, new_label))
        if new_second and not old_second:
            entry.diffs += _slot_diffs(new_first, new_second, _("construal 2 kept"))
        elif new_second:
            entry.diffs += _slot_diffs(old_second, new_second, _("construal 2"))
        elif old_second:
            entry.diffs.append(Note(_("construal 2 dropped")))
        if kind == OPENED:
            entry.unresolved = [name for name in SLOT_NAMES if new_first.get(name) is None]
        first, second, label = new_first, new_second, new_label
        out.append(entry)
    return out[::-1]
