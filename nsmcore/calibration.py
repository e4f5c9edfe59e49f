"""Calibration of the verifier against human judgements (SPEC section 6): ROC AUC, the ROC
curve, the threshold that best separates the two classes, and histograms for plots.

Plain Python over lists of (score, positive) pairs; no numpy or scikit-learn needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class CalibrationError(ValueError):
    """Figures that cannot be computed from the data given; the message says why."""


def _check(scores: Sequence[float], positives: Sequence[bool]) -> tuple[int, int]:
    if len(scores) != len(positives):
        raise CalibrationError(f"{len(scores)} scores but {len(positives)} judgements")
    n_pos = sum(1 for p in positives if p)
    n_neg = len(positives) - n_pos
    return n_pos, n_neg


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> float | None:
    """The probability that a random positive scores above a random negative (ties count a
    half): the Mann-Whitney form of the area under the ROC curve. None when either class is
    empty, since the area is then undefined."""
    n_pos, n_neg = _check(scores, positives)
    if not n_pos or not n_neg:
        return None
    order = sorted(range(len(scores)), key=lambda k: scores[k])
    rank_sum = 0.0
    k = 0
    while k < len(order):
        j = k
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[k]]:
            j += 1
        mean_rank = (k + j) / 2 + 1  # ranks k+1..j+1 share their mean
        rank_sum += mean_rank * sum(1 for m in order[k : j + 1] if positives[m])
        k = j + 1
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


@dataclass(frozen=True)
class RocPoint:
    threshold: float  # predicted positive when score >= threshold
    tpr: float
    fpr: float


def roc_curve(scores: Sequence[float], positives: Sequence[bool]) -> list[RocPoint]:
    """One point per distinct score, from the strictest threshold to the loosest, starting at
    (0, 0) with a threshold above every score."""
    n_pos, n_neg = _check(scores, positives)
    if not n_pos or not n_neg:
        return []
    pairs = sorted(zip(scores, positives, strict=True), key=lambda p: -p[0])
    points = [RocPoint(float("inf"), 0.0, 0.0)]
    tp = fp = 0
    k = 0
    while k < len(pairs):
        threshold = pairs[k][0]
        while k < len(pairs) and pairs[k][0] == threshold:
            tp += pairs[k][1]
            fp += not pairs[k][1]
            k += 1
        points.append(RocPoint(threshold, tp / n_pos, fp / n_neg))
    return points


@dataclass(frozen=True)
class Threshold:
    threshold: float
    tpr: float
    fpr: float
    youden_j: float
    accuracy: float


def best_threshold(scores: Sequence[float], positives: Sequence[bool]) -> Threshold | None:
    """The threshold with the largest Youden's J (TPR - FPR); among equals, the one nearest 0.5
    (the default), then the higher. None when a class is empty."""
    points = [p for p in roc_curve(scores, positives) if p.threshold != float("inf")]
    if not points:
        return None
    best = max(points, key=lambda p: (round(p.tpr - p.fpr, 12), -abs(p.threshold - 0.5), p.threshold))
    correct = sum(1 for s, p in zip(scores, positives, strict=True) if (s >= best.threshold) == bool(p))
    return Threshold(best.threshold, best.tpr, best.fpr, best.tpr - best.fpr, correct / len(scores))


def accuracy_at(scores: Sequence[float], positives: Sequence[bool], threshold: float) -> float | None:
    if not scores:
        return None
    _check(scores, positives)
    return sum(1 for s, p in zip(scores, positives, strict=True) if (s >= threshold) == bool(p)) / len(scores)


def histogram(values: Sequence[float], bins: int = 10, lo: float = 0.0, hi: float = 1.0) -> list[int]:
    """Counts in ``bins`` equal bins over [lo, hi]; the last bin is closed, so hi counts."""
    if bins < 1 or hi <= lo:
        raise CalibrationError("a histogram needs at least one bin over a non-empty range")
    counts = [0] * bins
    for v in values:
        if v < lo or v > hi:
            raise CalibrationError(f"value {v} outside [{lo}, {hi}]")
        counts[min(int((v - lo) / (hi - lo) * bins), bins - 1)] += 1
    return counts
