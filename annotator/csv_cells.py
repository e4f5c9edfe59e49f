"""Cells of every CSV the site writes, safe to open in a spreadsheet (issue 24: CSV formula
injection). Notes, residue, a round's name or an item's source id are text someone else chose; a
spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and some a tab or a carriage
return before one) as a formula. As OWASP's CSV injection guidance says, such a text cell gets a
leading apostrophe, which spreadsheets show as text and do not run.

Numbers are left as they are so figures stay numeric, a negative one too: a writer passes a figure
as a number (``fixed`` keeps its printed digits), never as preformatted text, which would be quoted.
Every CSV writer goes through ``csv_writer`` (or ``csv_row``); the JSONL exports keep text exactly."""

from __future__ import annotations

import csv
import math
import numbers
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

#: what a spreadsheet may read as the start of a formula
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """The value as a CSV cell: text that starts with one of FORMULA_STARTS behind an apostrophe;
    a number (int, float, Decimal; a bool) or None unchanged; anything else judged by its text."""
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if value is None or isinstance(value, numbers.Number):
        return value
    text = str(value)  # what csv would write: a date, a lazy translation
    return "'" + text if text.startswith(FORMULA_STARTS) else value


_STARTS = frozenset(FORMULA_STARTS)
_AS_IS = frozenset((int, float, bool, Decimal, type(None)))


def csv_row(cells: Iterable[Any]) -> list[Any]:
    """csv_cell of each cell, with text and plain numbers (nearly every cell) judged inline: a call
    of csv_cell per cell made the raw export's CSV of 140,000 revisions 30% slower (13.1 s against
    9.8 to 10.8 s, benchmarks/bench_raw_export.py on 2026-11-29's slow machine)."""
    return [
        ("'" + c if c[:1] in _STARTS else c) if type(c) is str else c if type(c) in _AS_IS else csv_cell(c)
        for c in cells
    ]


class _Writer:
    """csv.writer's writerow and writerows, each cell through csv_cell."""

    def __init__(self, file: Any, **options: Any) -> None:
        self._writer = csv.writer(file, **options)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow(csv_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        self._writer.writerows(map(csv_row, rows))


def csv_writer(file: Any, **options: Any) -> _Writer:
    """A csv.writer (the same options) whose every cell, header included, goes through csv_cell."""
    return _Writer(file, **options)


def fixed(value: float | None, digits: int) -> Decimal | float | str:
    """A figure to ``digits`` places as a number whose text is those digits ("-0.2500"), so a CSV
    keeps it numeric; empty for None; nan and the infinities as floats ("nan", "-inf")."""
    if value is None:
        return ""
    if not math.isfinite(value):
        return float(value)
    return Decimal(f"{value:.{digits}f}")
