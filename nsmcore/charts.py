"""Chart geometry for the pages' SVG: plain numbers in, coordinates out (no drawing library, no
Django). Templates draw what these return; views only call them.

Each chart maps its values onto a fixed drawing area; values past an axis are clipped to it, so
nothing is drawn outside the chart."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


def _clip(value: float, lo: float, hi: float) -> float:
    return min(max(value, lo), hi)


def _scale(lo: float, hi: float, start: float, length: float):
    """value in [lo, hi] -> coordinate in [start, start + length] (clipped)."""
    span = (hi - lo) or 1.0

    def at(value: float) -> float:
        return start + (_clip(value, lo, hi) - lo) / span * length

    return at


def nice_step(span: float, *, most: int = 6) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving at most ``most`` steps over span."""
    if span <= 0:
        return 1.0
    step = 10.0 ** int(f"{span / most:e}".split("e")[1])
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= most:
            return step * factor
    return step * 10


# An interval chart: alpha per slot, a bar from zero and its confidence interval --------------


@dataclass(frozen=True)
class Interval:
    label: str
    value: float | None  # None: undefined (drawn as a note, no bar)
    low: float | None = None
    high: float | None = None
    degenerate: bool = False


def interval_chart(rows: Sequence[Interval], *, width: float = 520.0, left: float = 120.0) -> dict[str, Any]:
    """Horizontal bars from zero to each value over an axis from lo to 1, where lo is 0, -0.5 or
    -1 (the smallest that holds the values and interval lows; a coefficient such as alpha is at
    most 1 and rarely below -1), with each interval as a whisker clipped to the axis."""
    lows = [r.low for r in rows if r.low is not None] + [r.value for r in rows if r.value is not None]
    lo = min([0.0, *lows])
    lo = -1.0 if lo < -0.5 else (-0.5 if lo < 0 else 0.0)
    row = 22
    x = _scale(lo, 1.0, left, width)
    bars = []
    for k, r in enumerate(rows):
        y = 10 + k * row
        bar: dict[str, Any] = {
            "slot": r.label,
            "y": y,
            "text_y": y + 13,
            "h": 16,
            "undefined": r.value is None,
            "degenerate": r.degenerate,
            "whisker_y1": y + 3,
            "whisker_y2": y + 13,
        }
        if r.value is not None:
            x0, x1 = sorted((x(0.0), x(r.value)))
            bar |= {"x": x0, "w": max(x1 - x0, 1.0), "alpha": r.value, "label_x": x(max(r.value, 0)) + 6}
            if r.low is not None and r.high is not None:
                bar |= {"ci_x1": x(r.low), "ci_x2": x(r.high), "ci_y": y + 8}
        bars.append(bar)
    # evenly spaced from lo to 1, each drawn once: quarters over [0, 1] and [-0.5, 1], halves over [-1, 1]
    step = 0.5 if lo < -0.5 else 0.25
    values = [lo + k * step for k in range(round((1.0 - lo) / step) + 1)]
    height = 10 + len(bars) * row + 24
    return {
        "bars": bars,
        "ticks": [{"x": x(t), "label": f"{t:g}"} for t in values],
        "width": left + width + 60,
        "height": height,
        "zero": x(0.0),
        "axis_y": height - 20,
        "tick_y": height - 4,
        "label_x": left - 8,
        "undefined_x": x(0.0) + 6,
        "lo": lo,
    }


# Bars with whiskers: a score per class (or model) with its interval, on a vertical axis -------


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    low: float | None = None
    high: float | None = None


#: the height of a bar whose value is 0: a visible stub standing on the axis
ZERO_STUB = 2.0


def whisker_bars(
    bars: Sequence[Bar],
    *,
    axis_max: float | None = None,
    height: float = 160.0,
    bar_width: float = 28.0,
    gap: float = 12.0,
    pad: float = 30.0,
    label_room: float = 0.0,
) -> dict[str, Any]:
    """Vertical bars from 0 up to each value, whiskers from low to high; the axis runs from 0 to
    ``axis_max`` (default: the largest value or high, or 1 when all are 0). Values and whiskers
    past the axis are clipped to it. ``label_room`` adds that much height under the axis, and width
    on the right, for the bars' names (written at an angle from ``label_y``). A value of 0 is a
    stub of ``ZERO_STUB`` standing on the axis."""
    top = axis_max
    if top is None:
        top = max([b.value for b in bars] + [b.high for b in bars if b.high is not None] + [0.0]) or 1.0
    y = _scale(0.0, top, 0.0, height)

    def up(value: float) -> float:  # SVG's y grows downwards
        return pad + height - y(value)

    out = []
    for k, b in enumerate(bars):
        x = pad + gap + k * (bar_width + gap)
        # a value of 0 is a stub of ZERO_STUB above the axis (not nothing, never below the axis)
        h = max(y(max(b.value, 0.0)), ZERO_STUB)
        shape: dict[str, Any] = {
            "label": b.label,
            "value": b.value,
            "x": x,
            "x2": x + bar_width,
            "w": bar_width,
            "y": pad + height - h,
            "h": h,
            "zero": b.value <= 0,
            "mid_x": x + bar_width / 2,
            "clipped": b.value > top,
        }
        if b.low is not None and b.high is not None:
            shape |= {"whisker_y1": up(b.high), "whisker_y2": up(b.low)}
        out.append(shape)
    step = nice_step(top, most=4)
    ticks = []
    t = 0.0
    while t <= top + 1e-9:
        ticks.append({"y": up(t), "label": f"{t:g}"})
        t = round(t + step, 10)
    return {
        "bars": out,
        "ticks": ticks,
        # names written at an angle reach right about as far as down: room for the last one's
        "width": 2 * pad + gap + len(bars) * (bar_width + gap) + label_room,
        "height": height + 2 * pad + label_room,
        "axis_y": pad + height,
        "label_y": pad + height + 12,
        "top_y": pad,
        "left": pad,
        "max": top,
    }


# A heatmap: a grid of cells whose colour deepens with the value (a confusion matrix) ----------


def heatmap(
    values: Sequence[Sequence[float]],
    *,
    rows: Sequence[str],
    columns: Sequence[str],
    vmax: float | None = None,
    cell: float = 36.0,
    left: float = 110.0,
    top: float = 90.0,
    rgb: tuple[int, int, int] = (31, 94, 168),
) -> dict[str, Any]:
    """Cells at (row, column) with ``intensity`` in [0, 1], monotonic in the value (0 at 0 or
    below, 1 at ``vmax`` or above; default vmax: the largest value), and the fill as an rgba
    colour of that opacity. ``dark`` says to write the number in white."""
    if len(values) != len(rows) or any(len(r) != len(columns) for r in values):
        raise ValueError(f"a heatmap of {len(rows)} x {len(columns)} needs that many values")
    top_value = vmax if vmax is not None else max((v for r in values for v in r), default=0.0)
    cells = []
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            intensity = _clip(v / top_value, 0.0, 1.0) if top_value > 0 else 0.0
            cells.append(
                {
                    "row": rows[i],
                    "column": columns[j],
                    "value": v,
                    "x": left + j * cell,
                    "y": top + i * cell,
                    "w": cell,
                    "h": cell,
                    "text_x": left + j * cell + cell / 2,
                    "text_y": top + i * cell + cell / 2 + 4,
                    "intensity": intensity,
                    "fill": f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{intensity:.3f})",
                    "dark": intensity > 0.55,
                }
            )
    return {
        "cells": cells,
        "row_labels": [
            {"label": r, "x": left - 6, "y": top + i * cell + cell / 2 + 4} for i, r in enumerate(rows)
        ],
        "column_labels": [
            {"label": c, "x": left + j * cell + cell / 2, "y": top - 8} for j, c in enumerate(columns)
        ],
        "width": left + len(columns) * cell + 10,
        "height": top + len(rows) * cell + 10,
        "vmax": top_value,
    }


# A strip: many values (accuracies under random orders) as ticks on one axis, a few marked ------


def strip_chart(
    values: Sequence[float],
    *,
    marks: Sequence[tuple[str, float]] = (),
    lo: float = 0.0,
    hi: float = 1.0,
    width: float = 520.0,
    pad: float = 30.0,
) -> dict[str, Any]:
    """Each value as a short tick on a horizontal axis from ``lo`` to ``hi`` (clipped to it), and
    each named mark (the canonical order, a swap) as a taller line with its name, the names
    staggered so that close marks stay readable."""
    x = _scale(lo, hi, pad, width)
    axis_y = 60.0
    ticks = [{"x": x(v), "value": v} for v in values]

    # a name near an end is written inward from its mark, so it stays inside the chart
    def anchor(at: float) -> str:
        return "start" if at < pad + width * 0.25 else ("end" if at > pad + width * 0.75 else "middle")

    marked = [
        {"label": name, "value": v, "x": x(v), "y1": axis_y - 26.0, "text_y": 14.0 + 12.0 * (k % 2),
         "anchor": anchor(x(v))}
        for k, (name, v) in enumerate(marks)
    ]  # fmt: skip
    step = nice_step(hi - lo, most=5)
    scale = [lo + k * step for k in range(round((hi - lo) / step) + 1)]
    tick_y1 = axis_y - 10.0
    return {
        "ticks": ticks,
        # the ticks as one SVG path: a thousand orders are one element, not a thousand lines whose
        # four coordinates a template would format one by one (a quarter of the page's render)
        "ticks_path": "".join(f"M{t['x']:.1f} {tick_y1:g}V{axis_y:g}" for t in ticks),
        "marks": marked,
        "scale": [{"x": x(t), "label": f"{t:g}"} for t in scale],
        "axis_y": axis_y,
        "tick_y1": tick_y1,
        "scale_y": axis_y + 16.0,
        "left": pad,
        "right": pad + width,
        "width": width + 2 * pad,
        "height": axis_y + 24.0,
    }


# A line chart: a loss curve over steps ----------------------------------------------------------


def line_chart(
    points: Sequence[tuple[float, float]],
    *,
    width: float = 420.0,
    height: float = 180.0,
    pad: float = 36.0,
    y_min: float | None = None,
    y_max: float | None = None,
) -> dict[str, Any]:
    """A polyline through (x, y) points over axes spanning them (y from ``y_min``, default the
    smaller of 0 and the lowest y, to ``y_max``, default the highest y), with round ticks."""
    if not points:
        return {"points": "", "dots": [], "x_ticks": [], "y_ticks": [], "width": width + 2 * pad,
                "height": height + 2 * pad, "empty": True}  # fmt: skip
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x_lo, x_hi = min(xs), max(xs)
    y_lo = min(0.0, *ys) if y_min is None else y_min
    y_hi = max(ys) if y_max is None else y_max
    if y_hi <= y_lo:
        y_hi = y_lo + 1.0
    sx = _scale(x_lo, x_hi, pad, width)
    sy = _scale(y_lo, y_hi, 0.0, height)

    def y_at(value: float) -> float:
        return pad + height - sy(value)

    coords = [(sx(x), y_at(y)) for x, y in points]

    def ticks(lo: float, hi: float) -> list[float]:
        step = nice_step(hi - lo, most=5)
        first = step * math.ceil(lo / step - 1e-9)
        out, t = [], first
        while t <= hi + 1e-9:
            out.append(round(t, 10) + 0.0)  # + 0.0: no "-0" label
            t += step
        return out

    return {
        "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in coords),
        "dots": [{"x": x, "y": y, "value": v} for (x, y), v in zip(coords, ys, strict=True)],
        "x_ticks": [{"x": sx(t), "label": f"{t:g}"} for t in ticks(x_lo, x_hi)] if x_hi > x_lo else [],
        "y_ticks": [{"y": y_at(t), "label": f"{t:g}"} for t in ticks(y_lo, y_hi)],
        "width": width + 2 * pad,
        "height": height + 2 * pad,
        "left": pad,
        "right": pad + width,
        "top": pad,
        "bottom": pad + height,
        "empty": False,
    }


def band_chart(
    series: Mapping[str, Sequence[tuple[float, float, float, float]]],
    *,
    width: float = 460.0,
    height: float = 200.0,
    pad: float = 40.0,
) -> dict[str, Any]:
    """Several curves on shared axes, each a mean line through (x, mean) and a band from low to
    high (the learning queue's simulation: one curve per order, the band over seeds). The
    axes span every point, with a little room above and below."""
    xs = [p[0] for rows in series.values() for p in rows]
    ys = [y for rows in series.values() for p in rows for y in p[1:]]
    if not xs:
        return {"series": [], "x_ticks": [], "y_ticks": [], "width": width + 2 * pad,
                "height": height + 2 * pad, "empty": True}  # fmt: skip
    frame = line_chart([(min(xs), max(0.0, min(ys) - 0.05)), (max(xs), min(1.0, max(ys) + 0.05))],
                       width=width, height=height, pad=pad,
                       y_min=max(0.0, min(ys) - 0.05), y_max=min(1.0, max(ys) + 0.05))  # fmt: skip
    sx = _scale(min(xs), max(xs), pad, width)
    y_lo, y_hi = max(0.0, min(ys) - 0.05), min(1.0, max(ys) + 0.05)
    sy = _scale(y_lo, y_hi, 0.0, height)

    def xy(x: float, y: float) -> str:
        return f"{sx(x):.1f},{pad + height - sy(y):.1f}"

    out = []
    for name, rows in series.items():
        out.append({
            "name": name,
            "points": " ".join(xy(x, m) for x, m, _, _ in rows),
            "band": " ".join(
                [xy(x, h) for x, _, _, h in rows] + [xy(x, lo) for x, _, lo, _ in reversed(rows)]
            ),
            "dots": [{"x": sx(x), "y": pad + height - sy(m), "value": m, "at": x} for x, m, _, _ in rows],
        })  # fmt: skip
    return {**frame, "series": out, "empty": False}


# The calibration page: an ROC curve and a histogram of scores ------------------------------------

ROC_SIZE, ROC_PAD = 220.0, 30.0


def roc_chart(
    curve: Sequence[tuple[float, float]], *, best: tuple[float, float] | None = None
) -> dict[str, Any] | None:
    """A square ROC plot: the curve through (false positive rate, true positive rate) points, the
    diagonal's ends, and the best threshold's point. None without points."""
    if not curve:
        return None

    def xy(fpr: float, tpr: float) -> tuple[float, float]:
        return ROC_PAD + _clip(fpr, 0, 1) * ROC_SIZE, ROC_PAD + (1 - _clip(tpr, 0, 1)) * ROC_SIZE

    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(f, t) for f, t in curve))
    chart: dict[str, Any] = {
        "points": points,
        "size": ROC_SIZE + 2 * ROC_PAD,
        "lo": ROC_PAD,
        "hi": ROC_PAD + ROC_SIZE,
        "side": ROC_SIZE,
        "tick_y": ROC_SIZE + 2 * ROC_PAD - 8,
        "top_label_y": ROC_PAD + 4,
    }
    if best is not None:
        chart["best_x"], chart["best_y"] = xy(*best)
    return chart


def histogram_chart(
    counts: Sequence[int], *, width: float = 360.0, height: float = 140.0, pad: float = ROC_PAD
) -> dict[str, Any] | None:
    """Bars of counts in equal bins over [0, 1] (the tallest reaches the top), with each bin's
    range as a label. None without bins."""
    if not counts:
        return None
    bins = len(counts)
    top = max(counts) or 1
    bar = width / bins
    bars = []
    for k, n in enumerate(counts):
        h = height * n / top
        bars.append(
            {"x": pad + k * bar + 1, "y": pad + height - h, "w": bar - 2, "h": h, "n": n,
             "label_y": pad + height - h - 4, "label_x": pad + k * bar + bar / 2,
             "range": f"{k / bins:.1f}-{(k + 1) / bins:.1f}"}
        )  # fmt: skip
    return {
        "bars": bars,
        "width": width + 2 * pad,
        "height": height + 2 * pad,
        "axis": pad + height,
        "lo": pad,
        "hi": pad + width,
        "tick_y": height + 2 * pad - 8,
    }
