"""Legality: every slot holds a value from its set and every rendered line passes the grammar."""

from __future__ import annotations

from functools import cache
from itertools import product
from typing import Any

from nsmcore.grammar import check_line
from nsmcore.render import CONTEXT_SLOTS, Context, lines_of
from nsmcore.schema import SLOT_BY_NAME, SLOTS, Explication, ExplicationError, SchemaProblem


def explication_problems(explication: Explication) -> list[SchemaProblem]:
    """Grammar problems of a parsed explication's rendered lines."""
    failing = _failing_lines(Context.of(explication))
    if not failing:  # the usual case: every line of the context passes
        return []
    problems = []
    for slot in SLOTS:
        value = getattr(explication, slot.name)
        for message in failing.get((slot.name, value), ()):
            text = lines_of(Context.of(explication))[slot.name, value]
            problems.append(SchemaProblem(slot.name, f"rendered line {text!r}: {message}", value))
    return problems


# The failing lines of one context, kept once checked: a pure function over the closed space of
# 108 contexts, so a legality check is one lookup (the Evaluation view checks every item of a round:
# 5,400 random explications took 0.28 s of its 0.77 s, rendering and checking each line again).
@cache
def _failing_lines(context: Context) -> dict[tuple[str, str], tuple[str, ...]]:
    failing = {}
    for key, text in lines_of(context).items():
        messages = tuple(check_line(text))
        if messages:
            failing[key] = messages
    return failing


def check(obj: Any) -> tuple[Explication | None, list[SchemaProblem]]:
    """Read ``obj`` and return the explication (None if unreadable) and every legality problem."""
    try:
        explication = obj if isinstance(obj, Explication) else Explication.from_dict(obj)
    except ExplicationError as error:
        return None, error.problems
    return explication, explication_problems(explication)


def is_legal(obj: Any) -> bool:
    return not check(obj)[1]


def warm() -> None:
    """Check every context's lines now, so that a web process pays it when it starts (config.warm)
    and not on the first page that checks a round's explications."""
    for values in product(*(SLOT_BY_NAME[name].values for name in CONTEXT_SLOTS)):
        _failing_lines(Context(*values))
