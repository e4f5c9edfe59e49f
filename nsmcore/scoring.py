"""Distributional scoring of the mapper (SPEC section 5) and pivotal slots of two construals.

The mapper is scored as a distribution over the K rule emotions built from the fired set, in
priority order. Three schemes: single-winner, uniform-fired, priority-decay (weight base**k for
the k-th fired rule). Laplace smoothing with ``alpha`` makes every label's probability positive;
an empty fired set gives the uniform distribution.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from nsmcore.schema import SLOT_NAMES, Explication

SCHEMES: tuple[str, ...] = ("single-winner", "uniform-fired", "priority-decay")


def distribution(
    fired: Sequence[str],
    labels: Sequence[str],
    *,
    scheme: str = "priority-decay",
    decay: float = 0.5,
    alpha: float = 0.05,
) -> np.ndarray:
    """p over ``labels`` (the rule emotions in priority order) for one fired set."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    if not 0 < decay <= 1:
        raise ValueError(f"decay must be in (0, 1], got {decay}")
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    k_labels = len(labels)
    index = {label: i for i, label in enumerate(labels)}
    unknown = [f for f in fired if f not in index]
    if unknown:
        raise ValueError(f"fired emotions not among the labels: {', '.join(unknown)}")
    if not fired:
        return np.full(k_labels, 1.0 / k_labels)
    q = np.zeros(k_labels)
    if scheme == "single-winner":
        q[index[fired[0]]] = 1.0
    elif scheme == "uniform-fired":
        for f in fired:
            q[index[f]] = 1.0 / len(fired)
    else:
        weights = np.array([decay**k for k in range(len(fired))])
        for f, w in zip(fired, weights / weights.sum(), strict=True):
            q[index[f]] = w
    return (q + alpha) / (1.0 + k_labels * alpha)


def ranked(p: np.ndarray, labels: Sequence[str]) -> list[str]:
    """Labels by probability, ties broken by rule priority (the order of ``labels``)."""
    return [labels[i] for i in sorted(range(len(labels)), key=lambda i: (-p[i], i))]


@dataclass(frozen=True)
class DistributionalScore:
    n: int
    scheme: str
    nll: float
    brier: float
    top1: float
    top3: float
    coverage: float
    set_accuracy: float

    def as_dict(self) -> dict[str, float | int | str]:
        return dict(self.__dict__)


def score(
    records: Iterable[tuple[Sequence[str], str]],
    labels: Sequence[str],
    *,
    scheme: str = "priority-decay",
    decay: float = 0.5,
    alpha: float = 0.05,
) -> DistributionalScore:
    """Mean NLL, mean Brier, top-1/top-3 accuracy, coverage and set-valued accuracy over
    (fired set, gold label) pairs."""
    nll = brier = top1 = top3 = covered = in_set = 0.0
    n = 0
    index = {label: i for i, label in enumerate(labels)}
    for fired, gold in records:
        if gold not in index:
            raise ValueError(f"gold label {gold!r} is not one of: {', '.join(labels)}")
        p = distribution(fired, labels, scheme=scheme, decay=decay, alpha=alpha)
        y = np.zeros(len(labels))
        y[index[gold]] = 1.0
        order = ranked(p, labels)
        nll += -math.log(p[index[gold]])
        brier += float(np.sum((p - y) ** 2))
        top1 += order[0] == gold
        top3 += gold in order[:3]
        covered += bool(fired)
        in_set += gold in fired
        n += 1
    if n == 0:
        raise ValueError("no records to score")
    return DistributionalScore(n, scheme, nll / n, brier / n, top1 / n, top3 / n, covered / n, in_set / n)


def pivotal_slots(a: Explication, b: Explication) -> tuple[str, ...]:
    """The slots whose values differ between two construals, in schema order."""
    return tuple(name for name in SLOT_NAMES if getattr(a, name) != getattr(b, name))
