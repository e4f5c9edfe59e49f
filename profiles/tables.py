"""A profile's per-slot table as rows of plain values: the CSV download and the command's text
print the same columns."""

from __future__ import annotations

from typing import Any

from annotator.csv_cells import fixed
from nsmcore.evaluation_report import Proportion
from profiles.selectors import Profile, SlotFigures

FIGURES = ("gold", "kept", "control", "overturned")
POOLED = "all slots"


def number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _cells(p: Proportion) -> list[Any]:
    # numbers, not text: the CSV keeps a negative figure numeric (annotator.csv_cells)
    return [p.k, p.n, fixed(p.value, 4), fixed(p.low, 4), fixed(p.high, 4)]


def slot_table(profile: Profile) -> tuple[list[str], list[list[Any]]]:
    """Per slot and pooled: agreement with gold, prefilled values kept, the blind control (and
    whose), kept minus control, and kept values gold overturned; each as k, n, share, 95% low and
    high."""
    header = ["slot"]
    for name in FIGURES:
        header += [f"{name}_k", f"{name}_n", f"{name}_share", f"{name}_low", f"{name}_high"]
        if name == "control":
            header += ["control_source", "difference"]

    def row(s: SlotFigures) -> list[Any]:
        out: list[Any] = [s.slot or POOLED]
        for name in FIGURES:
            out += _cells(getattr(s, name))
            if name == "control":
                out += [profile.control_source, fixed(s.difference, 4)]
        return out

    return header, [row(s) for s in (*profile.slots, profile.overall)]
