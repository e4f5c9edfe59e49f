"""What the learning queue buys, simulated (issue 27): an oracle annotator answers with known
explications (a silver pass, or a round's gold); the parser starts from ``start`` labelled items,
the queue picks the next ``batch`` from the unlabelled pool, the CPU parser (the classifier,
nsmcore.parsers.classifier_training) is trained again on everything labelled so far, and its
routed accuracy (against the reference labels) and mean per-slot accuracy (against the oracle)
are measured on held-out items after each batch. The same seeded start and held-out split serve
every order, so the orders differ only by which items they chose.

:func:`simulate` runs one order and seed; :func:`summarise` reduces the runs of several seeds to a
mean and a band (lowest to highest seed) per order and labelled count, and says how many items
the informative and mixed orders needed to reach random's final routed accuracy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nsmcore.charts import band_chart
from nsmcore.decoding import rule_lattice
from nsmcore.mapper import route
from nsmcore.queue import INFORMATIVE, MIXED, ORDERS, RANDOM, QueueError, rank_items
from nsmcore.schema import SLOT_NAMES

DEFAULT_START, DEFAULT_BATCH = 20, 10
HELDOUT_SHARE = 1 / 3
#: the classifier's options in a simulation: n-grams only, so a run's dozens of fits take seconds
FIT_OPTIONS: dict[str, Any] = {"decoding": "joint"}


@dataclass(frozen=True)
class Example:
    id: Any
    text: str
    slots: Mapping[str, str]  # the oracle's answer
    label: str  # the reference label


@dataclass(frozen=True)
class Point:
    labelled: int
    routed: float  # routed accuracy on the held-out items
    per_slot: float  # mean per-slot accuracy against the oracle on the held-out items


def split(examples: Sequence[Example], seed: int, start: int) -> tuple[list[int], list[int], list[int]]:
    """(held out, the seeded start, the rest of the pool), as indices into ``examples``."""
    n = len(examples)
    held = max(1, round(n * HELDOUT_SHARE))
    if n - held < start + 1:
        raise QueueError(
            f"{n} items: a simulation needs more than {start} to start with plus a third held out"
        )
    order = np.random.default_rng(seed).permutation(n).tolist()
    return order[:held], order[held : held + start], order[held + start :]


def _scores(model: Any, examples: Sequence[Example], indices: Sequence[int]) -> Point:
    texts = [examples[i].text for i in indices]
    decoded = model.decode(texts)
    routed = sum(route(d.values).label == examples[i].label for i, d in zip(indices, decoded, strict=True))
    slots = sum(
        d.values[s] == examples[i].slots[s] for i, d in zip(indices, decoded, strict=True) for s in SLOT_NAMES
    )
    return Point(0, routed / len(indices), slots / (len(indices) * len(SLOT_NAMES)))


def simulate(
    examples: Sequence[Example],
    *,
    order: str,
    seed: int = 0,
    start: int = DEFAULT_START,
    batch: int = DEFAULT_BATCH,
    share: float = 0.2,
    progress: Callable[[int, int], None] | None = None,
) -> list[Point]:
    """One learning curve: a point after the start and after each batch, until the pool is empty."""
    from nsmcore.parsers.classifier_training import train_classifier

    if order not in ORDERS:
        raise QueueError(f"order {order!r}: expected one of {', '.join(ORDERS)}")
    if start < 1 or batch < 1:
        raise QueueError("a simulation starts from at least one item and adds at least one a batch")
    held, labelled, pool = split(examples, seed, start)
    lattice = rule_lattice()
    points: list[Point] = []
    steps = 1 + -(-len(pool) // batch)
    step = 0
    while True:
        model = train_classifier(
            [(examples[i].text, dict(examples[i].slots)) for i in labelled], seed=seed, **FIT_OPTIONS
        )
        point = _scores(model, examples, held)
        points.append(Point(len(labelled), point.routed, point.per_slot))
        step += 1
        if progress:
            progress(step, steps)
        if not pool:
            return points
        if order == RANDOM:
            pool = np.random.default_rng(seed * 1000 + step).permutation(pool).tolist()
            chosen = pool[:batch]
        else:
            texts = [examples[i].text for i in pool]
            logp = model.log_proba(texts)
            labels = [d.label for d in model.decode(texts)]
            queue = rank_items(
                pool, logp, labels, order=order, share=0.2 if order == MIXED else share,
                seed=seed * 1000 + step, lattice=lattice,
            )  # fmt: skip
            chosen = [r.id for r in queue[:batch]]
        taken = set(chosen)
        labelled = labelled + chosen
        pool = [i for i in pool if i not in taken]


def summarise(runs: Mapping[str, Sequence[Sequence[Point]]]) -> dict[str, Any]:
    """Per order, per labelled count: the mean and the lowest and highest seed of routed and
    per-slot accuracy; and, for each measure, how many items each other order needed to reach
    random's final mean (None: it never did; with the shortfall at the end), with the seeds' band
    there and random's at its end (bands that overlap say the difference is within the seeds')."""
    curves: dict[str, list[dict[str, Any]]] = {}
    for order, seeds in runs.items():
        rows = []
        for k in range(min(len(s) for s in seeds)):
            routed = [s[k].routed for s in seeds]
            per_slot = [s[k].per_slot for s in seeds]
            rows.append({
                "labelled": seeds[0][k].labelled,
                "routed": round(float(np.mean(routed)), 4),
                "routed_low": round(min(routed), 4), "routed_high": round(max(routed), 4),
                "per_slot": round(float(np.mean(per_slot)), 4),
                "per_slot_low": round(min(per_slot), 4), "per_slot_high": round(max(per_slot), 4),
            })  # fmt: skip
        curves[order] = rows
    out: dict[str, Any] = {"curves": curves, "reach": {}, "reach_per_slot": {}}
    if curves.get(RANDOM):
        total = curves[RANDOM][-1]["labelled"]
        out["target"] = {
            "routed": curves[RANDOM][-1]["routed"],
            "per_slot": curves[RANDOM][-1]["per_slot"],
            "labelled": total,
        }
        for measure, key in (("routed", "reach"), ("per_slot", "reach_per_slot")):
            target = curves[RANDOM][-1][measure]
            for order in (INFORMATIVE, MIXED):
                rows = curves.get(order) or []
                first = next((r for r in rows if r[measure] >= target), None)
                out[key][order] = {
                    "labelled": first["labelled"] if first else None,
                    "share_of_items": round(first["labelled"] / total, 4) if first else None,
                    "final_shortfall": round(target - rows[-1][measure], 4) if rows and not first else 0.0,
                    # the seeds' band at that point against random's at its end: whether they overlap
                    "band": [first[f"{measure}_low"], first[f"{measure}_high"]] if first else None,
                }
        out["random_band"] = {
            m: [curves[RANDOM][-1][f"{m}_low"], curves[RANDOM][-1][f"{m}_high"]]
            for m in ("routed", "per_slot")
        }
    return out


#: the colours of the orders on the charts (the page's and the README's)
COLOURS = {RANDOM: "#8c959f", INFORMATIVE: "#1f6feb", MIXED: "#2da44e"}


def band_series(summary: Mapping[str, Any], measure: str) -> dict[str, Any]:
    """A chart of one measure (``routed`` or ``per_slot``) against items labelled: per order, the
    mean's line and the band between the lowest and highest seed (nsmcore.charts.band_chart),
    each series with its order's colour."""
    chart = band_chart({
        order: [(r["labelled"], r[measure], r[f"{measure}_low"], r[f"{measure}_high"]) for r in rows]
        for order, rows in summary["curves"].items()
    })  # fmt: skip
    for s in chart["series"]:
        s["colour"] = COLOURS.get(s["name"], "#555")
    return {**chart, "measure": measure}


def curve_svg(summary: Mapping[str, Any], title: str) -> str:
    """Both measures as one standalone SVG (the README's figure)."""
    parts = []
    charts = [band_series(summary, m) for m in ("routed", "per_slot")]
    w, h = charts[0]["width"], charts[0]["height"]
    total_w = 2 * w
    parts.append(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {total_w:.0f} {h + 50:.0f}" '
        f'width="{total_w:.0f}" height="{h + 50:.0f}" font-family="sans-serif" font-size="11">'
    )
    parts.append('<rect width="100%" height="100%" fill="white"/>')
    parts.append(f'<text x="10" y="16" font-size="13">{title}</text>')
    for k, (chart, name) in enumerate(
        zip(charts, ("routed accuracy", "mean per-slot accuracy"), strict=True)
    ):
        dx = k * w
        parts.append(f'<g transform="translate({dx:.0f},20)">')
        parts.append(f'<text x="{chart["left"]}" y="{chart["top"] - 8}">{name}</text>')
        parts.append(f'<line x1="{chart["left"]}" x2="{chart["right"]}" y1="{chart["bottom"]}" '
                     f'y2="{chart["bottom"]}" stroke="#555"/>')  # fmt: skip
        parts.append(f'<line x1="{chart["left"]}" x2="{chart["left"]}" y1="{chart["top"]}" '
                     f'y2="{chart["bottom"]}" stroke="#555"/>')  # fmt: skip
        for t in chart["y_ticks"]:
            parts.append(
                f'<text x="{chart["left"] - 4}" y="{t["y"] + 4:.1f}" text-anchor="end">{t["label"]}</text>'
            )
        for t in chart["x_ticks"]:
            parts.append(
                f'<text x="{t["x"]:.1f}" y="{chart["bottom"] + 14}" text-anchor="middle">{t["label"]}</text>'
            )
        parts.append(f'<text x="{(chart["left"] + chart["right"]) / 2:.0f}" y="{chart["bottom"] + 28}" '
                     f'text-anchor="middle">items labelled</text>')  # fmt: skip
        for s in chart["series"]:
            parts.append(
                f'<polygon points="{s["band"]}" fill="{s["colour"]}" fill-opacity="0.15" stroke="none"/>'
            )
            parts.append(
                f'<polyline points="{s["points"]}" fill="none" stroke="{s["colour"]}" stroke-width="2"/>'
            )
        parts.append("</g>")
    for k, order in enumerate(summary["curves"]):
        x = 10 + k * 110
        parts.append(
            f'<rect x="{x}" y="{h + 34}" width="14" height="4" fill="{COLOURS.get(order, "#555")}"/>'
        )
        parts.append(f'<text x="{x + 18}" y="{h + 40}">{order}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
