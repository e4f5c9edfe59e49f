"""The figures of an annotator's profile as plain functions over plain arrays (no Django): the
selectors read the database into arrays, these count. A *codes* array is (rows, 12) value indices
per slot (``nsmcore.agreement.MISSING`` where there is none), one row per submitted annotation.

Every share is a ``Proportion`` (k of n with its exact Clopper-Pearson 95% interval), per slot and
pooled over the twelve slots (the sum of the slots' k over the sum of their n, as the anchoring
page's "overall")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import numpy as np

from nsmcore.agreement import MISSING, Flow, flows
from nsmcore.evaluation_report import Proportion
from nsmcore.schema import SLOT_NAMES, SLOTS

LOOKUP = [{v: i for i, v in enumerate(slot.values)} for slot in SLOTS]
#: the throughput chart counts per day up to this many days, per week (from Monday) beyond
MAX_DAYS = 92


def encode(rows: Sequence[Sequence[Any]]) -> np.ndarray:
    """Rows of twelve slot values (strings, in schema order) -> (rows, 12) codes; a value outside
    the slot's set, or none, is MISSING."""
    out = np.full((len(rows), len(SLOTS)), MISSING, dtype=np.int16)
    for s, column in enumerate(zip(*rows, strict=True)):
        get = LOOKUP[s].get
        out[:, s] = [get(v, MISSING) for v in column]
    return out


@dataclass(frozen=True)
class Shares:
    """A figure per slot (in schema order) and pooled over the slots."""

    slots: tuple[Proportion, ...]
    overall: Proportion

    def by_slot(self) -> dict[str, Proportion]:
        return dict(zip(SLOT_NAMES, self.slots, strict=True))


def shares(hit: np.ndarray, valid: np.ndarray) -> Shares:
    """Per slot, k = rows where ``hit`` and ``valid``, n = rows where ``valid``; and both pooled."""
    hit = np.asarray(hit, dtype=bool).reshape(-1, len(SLOTS))
    valid = np.asarray(valid, dtype=bool).reshape(-1, len(SLOTS))
    k = (hit & valid).sum(axis=0)
    n = valid.sum(axis=0)
    return Shares(
        tuple(Proportion.of(int(a), int(b)) for a, b in zip(k, n, strict=True)),
        Proportion.of(int(k.sum()), int(n.sum())),
    )


def gold_agreement(codes: np.ndarray, gold: np.ndarray) -> Shares:
    """Agreement with gold: of the slots where both the annotator and gold (construal 1) have a
    value, the share where they are the same. Rows without gold are all MISSING in ``gold``."""
    valid = (codes >= 0) & (gold >= 0)
    return shares(codes == gold, valid)


def kept_mask(codes: np.ndarray, prefill: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kept, shown): ``shown`` the slots that had a prefill and a submitted value, ``kept`` those
    among them left at the prefill. The same test as ``nsmcore.agreement.retention`` (the
    anchoring page) and as the ``kept_prefill`` list an annotation stores when it is submitted
    (annotator.services.annotation_submit): a submitted value equal to the prefill shown."""
    shown = (prefill >= 0) & (codes >= 0)
    return shown & (codes == prefill), shown


def kept_share(codes: np.ndarray, prefill: np.ndarray) -> Shares:
    """The share of prefilled values kept, over the annotations that were shown a prefill."""
    kept, shown = kept_mask(codes, prefill)
    return shares(kept, shown)


def blind_control(codes: np.ndarray, predicted: np.ndarray) -> Shares:
    """The control arm: of blind annotations' values (no prefill shown) on items with the
    parser's prediction, the share equal to what the parser predicts. How often a value equals the
    parser's when the annotator did not see it: what keeping a prefill would reach by agreeing
    with the text alone."""
    valid = (predicted >= 0) & (codes >= 0)
    return shares(codes == predicted, valid)


def difference(a: Proportion, b: Proportion) -> float | None:
    """a - b, or None where either is undefined (anchoring: kept minus the blind control)."""
    if a.value is None or b.value is None:
        return None
    return a.value - b.value


def overturned(codes: np.ndarray, prefill: np.ndarray, gold: np.ndarray) -> Shares:
    """Of the kept prefilled values on items with gold, the share gold overturned (the kept
    value is not gold's)."""
    kept, _ = kept_mask(codes, prefill)
    judged = kept & (gold >= 0)
    return shares(codes != gold, judged)


def gold_flows(codes: np.ndarray, gold: np.ndarray) -> list[Flow]:
    """Directional flows from the annotator's values to gold's where they differ, most frequent
    first (``nsmcore.agreement.flows``, the flows page's, with gold as pass B). ``share_of_a`` is
    of the annotator's values x on items with gold."""
    has_gold = (gold >= 0).any(axis=1)
    return flows(codes[has_gold], gold[has_gold])


@dataclass(frozen=True)
class TimeSummary:
    n: int  # annotations with a recorded time
    median_ms: float | None
    p90_ms: float | None

    @property
    def median_s(self) -> float | None:
        return None if self.median_ms is None else self.median_ms / 1000

    @property
    def p90_s(self) -> float | None:
        return None if self.p90_ms is None else self.p90_ms / 1000


def time_summary(times_ms: Sequence[int] | np.ndarray) -> TimeSummary:
    """Median and 90th percentile (nearest rank: the value at rank ceil(0.9 n) in ascending
    order) of the recorded times; a time of 0 is none recorded (an import, or a save by the API
    that gave none) and is left out."""
    times = np.sort(np.asarray(times_ms, dtype=np.int64))
    times = times[times > 0]
    if not times.size:
        return TimeSummary(0, None, None)
    rank = math.ceil(0.9 * times.size)
    return TimeSummary(int(times.size), float(np.median(times)), float(times[rank - 1]))


@dataclass(frozen=True)
class Period:
    start: date
    days: int  # 1 for a day, 7 for a week
    items: int


def throughput(per_day: Mapping[date, int], *, max_days: int = MAX_DAYS) -> list[Period]:
    """Items submitted per day from the first day to the last, days without any included (as
    0); over more than ``max_days`` days, per week from Monday instead."""
    if not per_day:
        return []
    first, last = min(per_day), max(per_day)
    span = (last - first).days + 1
    if span <= max_days:
        return [
            Period(day, 1, int(per_day.get(day, 0)))
            for day in (first + timedelta(days=k) for k in range(span))
        ]
    monday = first - timedelta(days=first.weekday())
    weeks = (last - monday).days // 7 + 1
    counts = [0] * weeks
    for day, n in per_day.items():
        counts[(day - monday).days // 7] += int(n)
    return [Period(monday + timedelta(weeks=k), 7, n) for k, n in enumerate(counts)]
