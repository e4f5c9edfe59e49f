"""Distributional scoring of the mapper (SPEC section 5) and pivotal slots of two construals.

The mapper is scored as a distribution over the K rule emotions built from the fired set, in
priority order. Three schemes: single-winner, uniform-fired, priority-decay (weight base**k for
the k-th fired rule). Laplace smoothing with ``alpha`` makes every label's probability positive;
an empty fired set gives the uniform distribution, and so does an abstained item whatever fired
(a residue-abstained item keeps its fired set in its routing, but the mapper made no claim on it).

Top-k is reported two ways (issue 26). ``top1``/``top3`` count an abstained item as a miss: the
mapper named no label, so it cannot have named the right one, and top-1 equals accuracy for the
mapper's schemes. ``top1_uniform``/``top3_uniform`` are the paper's convention: the abstained item's
uniform distribution is ranked like any other, ties by priority, so an abstention whose reference
is relief (rule 0) is a top-1 hit; read them only beside the first pair.
"""

from __future__ import annotations

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
    top1: float  # abstentions as misses
    top3: float
    coverage: float
    set_accuracy: float
    top1_uniform: float  # the paper's convention: an abstention ranked as its uniform distribution
    top3_uniform: float

    def as_dict(self) -> dict[str, float | int | str]:
        return dict(self.__dict__)

    to_dict = as_dict


def score(
    records: Iterable[tuple[Sequence[str], str] | tuple[Sequence[str], str, str | None]],
    labels: Sequence[str],
    *,
    scheme: str = "priority-decay",
    decay: float = 0.5,
    alpha: float = 0.05,
) -> DistributionalScore:
    """Mean NLL, mean Brier, top-1/top-3 accuracy (both conventions), coverage and set-valued accuracy over
    (fired set, gold label) or (fired set, gold label, abstention type) records.

    An abstained record (any abstention type) is scored as the empty fired set whatever fired:
    the mapper made no claim on it, so it is not covered and its gold is not in its set (a
    residue-abstained item keeps its fired set in the routing, which used to count as covered)."""
    index = {label: i for i, label in enumerate(labels)}
    distinct: dict[tuple[str, ...], int] = {}
    rows: list[int] = []
    gold: list[int] = []
    for record in records:
        fired, label = record[0], record[1]
        abstained = len(record) > 2 and bool(record[2])
        if label not in index:
            raise ValueError(f"gold label {label!r} is not one of: {', '.join(labels)}")
        key = () if abstained else tuple(fired)
        rows.append(distinct.setdefault(key, len(distinct)))
        gold.append(index[label])
    if not rows:
        raise ValueError("no records to score")
    fired_sets = list(distinct)
    p = np.stack([distribution(f, labels, scheme=scheme, decay=decay, alpha=alpha) for f in fired_sets])
    members = np.zeros((len(fired_sets), len(labels)), dtype=bool)
    for r, fired in enumerate(fired_sets):
        members[r, [index[f] for f in fired]] = True
    return _summarise(p, members, np.asarray(rows), np.asarray(gold), labels, scheme)


def score_masks(
    masks: np.ndarray,
    gold: np.ndarray,
    abstained: np.ndarray,
    labels: Sequence[str],
    *,
    scheme: str = "priority-decay",
    decay: float = 0.5,
    alpha: float = 0.05,
) -> DistributionalScore:
    """:func:`score` over arrays: fired sets as uint64 bitmasks (bit k = ``labels[k]``, the rule
    set's emotions in priority order), gold label indices, and an abstained flag per item. Each
    distinct fired set is scored once, so 100,000 items cost about as much as a few hundred."""
    masks = np.where(np.asarray(abstained, dtype=bool), np.uint64(0), np.asarray(masks, dtype=np.uint64))
    gold = np.asarray(gold, dtype=np.int64)
    if masks.size == 0:
        raise ValueError("no records to score")
    if gold.min() < 0 or gold.max() >= len(labels):
        raise ValueError(f"gold label indices must lie in [0, {len(labels)})")
    distinct, rows = np.unique(masks, return_inverse=True)
    bits = (distinct[:, None] >> np.arange(len(labels), dtype=np.uint64)) & np.uint64(1)
    members = bits.astype(bool)
    p = np.stack(
        [
            distribution(
                [labels[k] for k in np.flatnonzero(row)], labels, scheme=scheme, decay=decay, alpha=alpha
            )
            for row in members
        ]
    )
    return _summarise(p, members, rows.reshape(-1), gold, labels, scheme)


#: the scheme name of a parser's own label distribution (nsmcore.decoding's region masses)
PARSER_SCHEME = "parser's own distribution"


def score_distributions(
    p: np.ndarray, masks: np.ndarray, gold: np.ndarray, abstained: np.ndarray, labels: Sequence[str]
) -> DistributionalScore:
    """A parser's own label distribution per item ((n, K) rows over ``labels``, each summing to 1,
    e.g. the region masses of joint decoding), scored like the mapper's schemes: NLL and Brier of
    the reference label, top-1 and top-3 (ties by priority), with the fired set (none for an
    abstained item) for coverage and set accuracy. A reference label given probability 0 counts
    at 1e-12, so one certain miss does not make the mean infinite."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != len(labels) or len(p) != len(gold):
        raise ValueError(f"expected ({len(gold)}, {len(labels)}) distributions, got {p.shape}")
    masks = np.where(np.asarray(abstained, dtype=bool), np.uint64(0), np.asarray(masks, dtype=np.uint64))
    bits = (masks[:, None] >> np.arange(len(labels), dtype=np.uint64)) & np.uint64(1)
    return _summarise(
        np.maximum(p, 1e-12), bits.astype(bool), np.arange(len(p)), np.asarray(gold, np.int64), labels,
        PARSER_SCHEME,
    )  # fmt: skip


def _summarise(
    p: np.ndarray,
    members: np.ndarray,
    rows: np.ndarray,
    gold: np.ndarray,
    labels: Sequence[str],
    scheme: str,
) -> DistributionalScore:
    """Per distinct fired set r: p[r] and members[r] (the fired set as booleans over labels);
    per item: its set ``rows[i]`` and gold index ``gold[i]``."""
    # position of each label in the ranking of each distinct distribution (ties by priority)
    position = np.empty(p.shape, dtype=np.int64)
    for r in range(p.shape[0]):
        order = sorted(range(len(labels)), key=lambda i, row=p[r]: (-row[i], i))
        position[r, order] = np.arange(len(labels))
    p_gold = p[rows, gold]
    brier = (p**2).sum(axis=1)[rows] - 2 * p_gold + 1.0
    rank = position[rows, gold]
    covered = members.any(axis=1)[rows]  # an item whose distribution came from a claim, not an abstention
    return DistributionalScore(
        len(rows),
        scheme,
        nll=float(-np.log(p_gold).mean()),
        brier=float(brier.mean()),
        top1=float(((rank == 0) & covered).mean()),
        top3=float(((rank < 3) & covered).mean()),
        coverage=float(covered.mean()),
        set_accuracy=float(members[rows, gold].mean()),
        top1_uniform=float((rank == 0).mean()),
        top3_uniform=float((rank < 3).mean()),
    )


def pivotal_slots(a: Explication, b: Explication) -> tuple[str, ...]:
    """The slots whose values differ between two construals, in schema order."""
    return tuple(name for name in SLOT_NAMES if getattr(a, name) != getattr(b, name))
