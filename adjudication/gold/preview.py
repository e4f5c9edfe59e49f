"""What a gold record's construals would be, before saving: each construal's rendered lines and
routed label, and a warning when two construals route to the same label (their pivotal slots
then change nothing). A read: the gold page shows it on load and, through htmx, as the
adjudicator changes slots."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from adjudication.gold.services import AdjudicationError
from nsmcore import route
from nsmcore.mapper import Routing
from nsmcore.render import Line, render_value
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES
from rules.rulesets import active_rule_set


@dataclass(frozen=True)
class ConstrualPreview:
    index: int
    lines: list[Line]
    routing: Routing | None  # None while a slot is unresolved
    unresolved: list[str]
    pivotal: list[str] = field(default_factory=list)  # the second's slots that differ from the first


@dataclass(frozen=True)
class GoldPreview:
    construals: list[ConstrualPreview]

    @property
    def same_label(self) -> str | None:
        """The label both construals route to, when they route to the same one."""
        routed = [c.routing.label for c in self.construals if c.routing is not None]
        return routed[0] if len(self.construals) == 2 and len(routed) == 2 and len(set(routed)) == 1 else None

    @property
    def pivotal(self) -> list[str]:
        return self.construals[1].pivotal if len(self.construals) == 2 else []


def _check(values: dict[str, str]) -> None:
    for name, value in values.items():
        if name not in SLOT_BY_NAME:
            raise AdjudicationError(
                _("unknown slot %(slot)s; slots: %(slots)s")
                % {"slot": repr(name), "slots": ", ".join(SLOT_NAMES)}
            )
        allowed = SLOT_BY_NAME[name].values
        if value not in allowed:
            raise AdjudicationError(
                _("%(slot)s: %(value)s is not an allowed value; allowed: %(allowed)s")
                % {"slot": name, "value": repr(value), "allowed": ", ".join(allowed)}
            )


def _construal(index: int, slots: dict[str, str | None], residue: str) -> ConstrualPreview:
    lines = []
    for name in SLOT_NAMES:
        value = slots.get(name)
        text = render_value(name, value) if value is not None else None
        if text is not None:
            lines.append(Line(name, value, text))
    unresolved = [name for name in SLOT_NAMES if slots.get(name) is None]
    routing = None if unresolved else route({**slots, "residue": residue}, active_rule_set())
    return ConstrualPreview(index, lines, routing, unresolved)


def gold_preview(
    *, first: dict[str, str | None], second: dict[str, str | None] | None = None, residue: str = ""
) -> GoldPreview:
    """The construals ``first`` (and ``second``, when kept) rendered and routed. A value outside
    its slot's set raises AdjudicationError naming it."""
    _check({k: v for k, v in first.items() if v is not None})
    construals = [_construal(1, first, residue)]
    if second is not None:
        _check({k: v for k, v in second.items() if v is not None})
        other = _construal(2, second, residue)
        pivotal = [name for name in SLOT_NAMES if second.get(name) != first.get(name)]
        construals.append(ConstrualPreview(2, other.lines, other.routing, other.unresolved, pivotal))
    return GoldPreview(construals)
