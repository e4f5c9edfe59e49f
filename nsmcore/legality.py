"""Legality: every slot holds a value from its set and every rendered line passes the grammar."""

from __future__ import annotations

from typing import Any

from nsmcore.grammar import check_line
from nsmcore.render import render
from nsmcore.schema import Explication, ExplicationError, SchemaProblem


def explication_problems(explication: Explication) -> list[SchemaProblem]:
    """Grammar problems of a parsed explication's rendered lines."""
    problems = []
    for line in render(explication):
        for message in check_line(line.text):
            problems.append(SchemaProblem(line.slot, f"rendered line {line.text!r}: {message}", line.value))
    return problems


def check(obj: Any) -> tuple[Explication | None, list[SchemaProblem]]:
    """Read ``obj`` and return the explication (None if unreadable) and every legality problem."""
    try:
        explication = obj if isinstance(obj, Explication) else Explication.from_dict(obj)
    except ExplicationError as error:
        return None, error.problems
    return explication, explication_problems(explication)


def is_legal(obj: Any) -> bool:
    return not check(obj)[1]
