"""Joint decoding inside the rules: the likeliest legal explication that the active rule set routes.

A parser that scores each slot on its own (the classifier, the constrained language model) and
keeps each slot's best value gets every slot likely and the explication often unroutable: a
label needs the slots a rule reads to be right *together*. This module decodes jointly, exactly,
over the whole space of 1,866,240 assignments, with the rule set as the constraint.

Why it is exact and fast: the mapper reads a slot only through the bitmask of rules its value
leaves possible (``RuleSet.slot_masks``). Values with the same bitmask are interchangeable for
routing, so each slot's values fall into a few *classes* (rule set v1: realization has five,
``can`` and ``none`` sharing one; experiencer and intensity one each). The space of class
combinations is small (38,880 for v1, against 1.87M assignments), and each combination routes to
one rule or none. For a text with per-slot log-probabilities:

- the best assignment inside a class combination takes, per slot, the best value of its class;
- the best explication routed to label k is the best combination whose winning rule is k;
- the probability mass of label k's region is the sum over its combinations of the product of
  per-slot class masses (the per-slot distributions are taken as independent, as the per-slot
  models are).

All three are array operations over (texts, combinations), so decoding runs at thousands of
texts a second. The classes and combinations are derived from whatever rule set is given, never
from a hard-coded table.

A typed abstention: when the best routed explication is far less likely than the best overall
(log-probability gap above ``abstain_gap``), the parser keeps the best overall explication, which
routes to no rule (``no-rule``), instead of forcing a label the text does not support. The gap is
chosen on training data (:func:`choose_gap`), never on the items being scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from nsmcore.mapper import ABSTAIN, RuleSet, first_rule, load_rule_set
from nsmcore.schema import SLOT_NAMES, SLOTS

CHUNK = 256  # texts per array pass: (CHUNK, combinations) float32 stays near 40 MB for v1
FLOOR = -1e4  # stands for log 0 in float32 sums: twelve of them stay finite


class DecodingError(ValueError):
    """Scores that cannot be decoded; the message names the slot and the shape expected."""


@dataclass(frozen=True)
class Decoded:
    """One text's joint decoding."""

    values: dict[str, str]  # the twelve slot values chosen
    label: str  # the label the rule set gives them (``abstain`` when none fires)
    logp: float  # log-probability of the chosen explication under the per-slot scores
    best_logp: float  # log-probability of the best explication overall (per-slot argmax)
    gap: float  # best_logp minus the best routed explication's log-probability (>= 0)
    abstained: bool  # the best routed explication was too far below the best overall
    label_mass: dict[str, float]  # each label's region mass, and ``abstain`` for no rule
    posteriors: dict[str, dict[str, float]]  # per slot, each value's probability
    #: the share of the best routed label among the routed labels' scores (each region's best
    #: explication, raised by the label prior if any): how sure the choice of label is
    confidence: float = 1.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "logp": round(self.logp, 4),
            "best_logp": round(self.best_logp, 4),
            "gap": round(self.gap, 4),
            "confidence": round(self.confidence, 5),
            "abstained": self.abstained,
            "label_mass": {k: round(v, 5) for k, v in self.label_mass.items()},
            "posteriors": {s: {v: round(p, 5) for v, p in d.items()} for s, d in self.posteriors.items()},
        }


class RuleLattice:
    """The class combinations of one rule set, each with its winning rule."""

    def __init__(self, rule_set: RuleSet | None = None):
        self.rule_set = rule_set or load_rule_set()
        self.labels: tuple[str, ...] = self.rule_set.emotions
        # per slot: value index -> class index; classes in order of first value
        self.value_class: list[np.ndarray] = []
        self.class_masks: list[np.ndarray] = []
        for table in self.rule_set.slot_masks:
            distinct: dict[int, int] = {}
            classes = np.array([distinct.setdefault(int(m), len(distinct)) for m in table], dtype=np.int64)
            self.value_class.append(classes)
            self.class_masks.append(np.array(list(distinct), dtype=np.uint64))
        shape = tuple(len(m) for m in self.class_masks)
        combos = np.indices(shape).reshape(len(shape), -1).T  # (C, 12) class indices
        masks = self.class_masks[0][combos[:, 0]]
        for s in range(1, len(shape)):
            masks &= self.class_masks[s][combos[:, s]]
        winners = first_rule(masks).astype(np.int64)  # -1: no rule
        # Sort combinations by winner so each label's combinations are one contiguous run.
        order = np.argsort(winners, kind="stable")
        self.combos = combos[order]
        self.winners = winners[order]
        groups = np.arange(-1, len(self.labels))
        self.starts = np.searchsorted(self.winners, groups, side="left")
        self.ends = np.searchsorted(self.winners, groups, side="right")

    @cached_property
    def incidence(self) -> np.ndarray:
        """(total classes, combinations) 0/1 matrix: which class of each slot a combination takes."""
        offsets = np.cumsum((0, *self.class_counts[:-1]))
        matrix = np.zeros((sum(self.class_counts), self.size), dtype=np.float32)
        for s, offset in enumerate(offsets):
            matrix[offset + self.combos[:, s], np.arange(self.size)] = 1.0
        return matrix

    @property
    def size(self) -> int:
        return len(self.combos)

    @cached_property
    def class_counts(self) -> tuple[int, ...]:
        return tuple(len(m) for m in self.class_masks)

    def region(self, label: str) -> slice:
        """The combinations whose winner is ``label`` (``abstain``: no rule fires)."""
        g = 0 if label == ABSTAIN else self.labels.index(label) + 1
        return slice(int(self.starts[g]), int(self.ends[g]))


_LATTICES: dict[str, RuleLattice] = {}


def rule_lattice(rule_set: RuleSet | None = None) -> RuleLattice:
    """The lattice of a rule set (the bundled default when None), built once per process and
    rule set content (a pure function of the rules; a handful of rule sets ever meet one)."""
    rule_set = rule_set or load_rule_set()
    if rule_set.content_hash not in _LATTICES:
        _LATTICES[rule_set.content_hash] = RuleLattice(rule_set)
    return _LATTICES[rule_set.content_hash]


def rules_tag(rule_set: RuleSet | None = None) -> str:
    """``v1-<hash8>``: the rule set a joint decoding routes into, for a parser's version (a
    parser decoding into another rule set makes other predictions)."""
    rule_set = rule_set or load_rule_set()
    return f"v{rule_set.version}-{rule_set.content_hash[:8]}"


def _check_scores(logp: Sequence[np.ndarray]) -> tuple[list[np.ndarray], int]:
    if len(logp) != len(SLOTS):
        raise DecodingError(f"expected scores for {len(SLOTS)} slots, got {len(logp)}")
    arrays = [np.asarray(a, dtype=np.float64) for a in logp]
    n = arrays[0].shape[0] if arrays[0].ndim == 2 else -1
    for slot, a in zip(SLOTS, arrays, strict=True):
        if a.ndim != 2 or a.shape != (n, len(slot.values)):
            raise DecodingError(
                f"{slot.name}: scores of shape {a.shape}, expected ({n}, {len(slot.values)}) "
                f"(one column per value: {', '.join(slot.values)})"
            )
        if not np.all(np.isfinite(a) | (a == -np.inf)):
            raise DecodingError(f"{slot.name}: scores must be log-probabilities (no NaN or +inf)")
    return arrays, n


def normalise(logp: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each slot's scores as log-probabilities (log-softmax per row)."""
    out = []
    for a in logp:
        a = np.asarray(a, dtype=np.float64)
        top = a.max(axis=1, keepdims=True)
        out.append(a - top - np.log(np.exp(a - top).sum(axis=1, keepdims=True)))
    return out


def _class_tables(lattice: RuleLattice, logp: list[np.ndarray]) -> tuple[list, list, list]:
    """Per slot: (n, classes) best value's log-prob, its value index, and the class log-mass."""
    best, arg, mass = [], [], []
    for s, a in enumerate(logp):
        classes = lattice.value_class[s]
        k = len(lattice.class_masks[s])
        b = np.full((a.shape[0], k), -np.inf)
        g = np.zeros((a.shape[0], k), dtype=np.int64)
        m = np.full((a.shape[0], k), -np.inf)
        for c in range(k):
            members = np.flatnonzero(classes == c)
            sub = a[:, members]
            pick = sub.argmax(axis=1)
            b[:, c] = sub[np.arange(len(a)), pick]
            g[:, c] = members[pick]
            m[:, c] = np.logaddexp.reduce(sub, axis=1)
        best.append(b)
        arg.append(g)
        mass.append(m)
    return best, arg, mass


def _stack(tables: list[np.ndarray]) -> np.ndarray:
    """Per-slot (n, classes) tables side by side as one (n, total classes) float32 matrix, with
    -inf clamped (a 0 x -inf in the product below would be NaN)."""
    return np.maximum(np.concatenate(tables, axis=1), FLOOR).astype(np.float32)


def region_scores(
    lattice: RuleLattice,
    logp: Sequence[np.ndarray],
    *,
    tables: tuple | None = None,
    label_prior: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every text and label (column 0: no rule, then the rules in order): the best
    explication's log-probability in the label's region and the region's mass; and per text the
    class combination of the best *routed* explication (whatever its label), the regions'
    scores raised by ``label_prior`` ((n, rules) log-weights, in rule order) when given.

    A combination's score is the sum of its slots' class scores: one product of the (n, 32)
    class table with the (32, combinations) incidence matrix, which BLAS does far faster than
    twelve gathers."""
    arrays, n = _check_scores(logp)
    best, _, mass = tables or _class_tables(lattice, arrays)
    groups = len(lattice.labels) + 1
    top = np.full((n, groups), -np.inf)
    routed_at = np.zeros(n, dtype=np.int64)
    region_mass = np.zeros((n, groups))
    best_m, mass_m = _stack(best), _stack(mass)
    incidence = lattice.incidence
    present = [g for g in range(groups) if lattice.starts[g] < lattice.ends[g]]
    starts = lattice.starts[present]
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        score = best_m[lo:hi] @ incidence
        top[lo:hi, present] = np.maximum.reduceat(score, starts, axis=1)
        prob = np.exp(mass_m[lo:hi] @ incidence)
        region_mass[lo:hi, present] = np.add.reduceat(prob, starts, axis=1, dtype=np.float64)
        # only the winning region's block is searched for its argmax, row by row
        routed = top[lo:hi, 1:] if label_prior is None else top[lo:hi, 1:] + label_prior[lo:hi]
        winners = routed.argmax(axis=1) + 1
        for row, g in enumerate(winners):
            a, b = int(lattice.starts[g]), int(lattice.ends[g])
            routed_at[lo + row] = int(score[row, a:b].argmax()) + a
    top[top <= FLOOR / 2] = -np.inf
    return top, routed_at, region_mass


def decode(
    logp: Sequence[np.ndarray],
    *,
    lattice: RuleLattice | None = None,
    abstain_gap: float | None = None,
    label_prior: np.ndarray | None = None,
    abstain_below: float | None = None,
) -> list[Decoded]:
    """Jointly decode per-slot log-probabilities (one (n, values) array per slot, in schema
    order; rows are normalised here).

    ``label_prior`` ((n, rules) log-weights in the rule set's rule order, e.g. a weighted text
    label classifier's log-probabilities) is added to each region's best score when choosing the
    region: the explication is then the best one inside the chosen label's region.

    Typed abstentions (``no-rule``), each off when None: ``abstain_gap`` keeps the best overall
    explication when the best routed one is more than that many nats less likely;
    ``abstain_below`` keeps the best explication no rule routes when the chosen label's
    ``confidence`` is below it."""
    lattice = lattice or rule_lattice()
    arrays, n = _check_scores(logp)
    arrays = normalise(arrays)
    if label_prior is not None:
        label_prior = np.asarray(label_prior, dtype=np.float64)
        if label_prior.shape != (n, len(lattice.labels)):
            raise DecodingError(
                f"label_prior: expected shape ({n}, {len(lattice.labels)}) (texts, rules), "
                f"got {label_prior.shape}"
            )
    tables = _class_tables(lattice, arrays)
    arg = tables[1]
    top, routed_at, region_mass = region_scores(lattice, arrays, tables=tables, label_prior=label_prior)
    best_overall = np.array([a.max(axis=1) for a in arrays]).sum(axis=0) if n else np.zeros(0)
    argmax = [a.argmax(axis=1) for a in arrays]
    scores = top[:, 1:] if label_prior is None else top[:, 1:] + label_prior
    confidence = _shares(scores)
    out = []
    for i in range(n):
        g = int(scores[i].argmax()) + 1
        gap = float(best_overall[i] - top[i, g])
        # unsure of the label, and some explication routes to no rule: the likeliest such one
        unsure = abstain_below is not None and confidence[i] < abstain_below and np.isfinite(top[i, 0])
        abstained = (abstain_gap is not None and gap > abstain_gap) or unsure
        if unsure:
            combo = lattice.combos[_best_in_region(lattice, tables[0], i, 0)]
            codes = [int(arg[s][i, combo[s]]) for s in range(len(SLOTS))]
            logp_chosen = float(top[i, 0])
        elif abstained:
            codes = [int(argmax[s][i]) for s in range(len(SLOTS))]
            logp_chosen = float(best_overall[i])
        else:
            combo = lattice.combos[routed_at[i]]
            codes = [int(arg[s][i, combo[s]]) for s in range(len(SLOTS))]
            logp_chosen = float(top[i, g])
        values = {slot.name: slot.values[c] for slot, c in zip(SLOTS, codes, strict=True)}
        winner = _winner(lattice, codes)
        mass = {ABSTAIN: float(region_mass[i, 0])}
        mass.update({label: float(region_mass[i, k + 1]) for k, label in enumerate(lattice.labels)})
        posteriors = {
            slot.name: {v: float(np.exp(arrays[s][i, j])) for j, v in enumerate(slot.values)}
            for s, slot in enumerate(SLOTS)
        }
        out.append(
            Decoded(
                values,
                winner,
                logp_chosen,
                float(best_overall[i]),
                max(gap, 0.0),
                abstained,
                mass,
                posteriors,
                float(confidence[i]),
            )
        )
    return out


def _shares(scores: np.ndarray) -> np.ndarray:
    """Per row, the largest entry's share of the row's exp-sum (a softmax's maximum)."""
    if not len(scores):
        return np.zeros(0)
    top = scores.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        share = 1.0 / np.exp(scores - top).sum(axis=1)
    return np.where(np.isfinite(top[:, 0]), share, 0.0)


def _best_in_region(lattice: RuleLattice, best: list[np.ndarray], row: int, group: int) -> int:
    """The index of the best class combination of one text inside one label's region."""
    a, b = int(lattice.starts[group]), int(lattice.ends[group])
    scores = _stack([t[row : row + 1] for t in best]) @ lattice.incidence[:, a:b]
    return int(scores[0].argmax()) + a


def _winner(lattice: RuleLattice, codes: Sequence[int]) -> str:
    mask = np.uint64(np.iinfo(np.uint64).max)
    for table, c in zip(lattice.rule_set.slot_masks, codes, strict=True):
        mask &= table[c]
    k = int(first_rule(np.array([mask]))[0])
    return lattice.labels[k] if k >= 0 else ABSTAIN


def region_posteriors(
    lattice: RuleLattice, logp: Sequence[np.ndarray], labels: Sequence[str], *, trust: float = 1.0
) -> list[np.ndarray]:
    """Per slot, each text's value distribution *given its label* (the E-step of training through
    the rules).

    ``trust`` is the probability that a text's label is the one its explication routes to. At 1
    the per-slot distributions are restricted to the label's region and renormalised. Below 1
    the label is a noisy observation: an explication outside the region keeps likelihood
    ``(1 - trust) / labels`` (a careful annotator's explications route to the prompted emotion
    for only about a third of crowd-enVent texts, so a label pulls the slots, it does not
    dictate them). A label no combination reaches gets the unrestricted distributions."""
    if not 0.0 < trust <= 1.0:
        raise DecodingError(f"trust must be in (0, 1], got {trust}")
    arrays, n = _check_scores(logp)
    arrays = normalise(arrays)
    if len(labels) != n:
        raise DecodingError(f"{n} score rows but {len(labels)} labels")
    _, _, mass = _class_tables(lattice, arrays)
    out = [np.zeros_like(a) for a in arrays]
    for label in sorted(set(labels)):
        rows = np.flatnonzero(np.asarray(labels) == label)
        region = lattice.region(label) if label == ABSTAIN or label in lattice.labels else slice(0, 0)
        if region.start == region.stop:
            for s in range(len(SLOTS)):
                out[s][rows] = np.exp(arrays[s][rows])
            continue
        incidence = lattice.incidence[:, region]
        mass_m = _stack(mass)
        offsets = np.cumsum((0, *lattice.class_counts[:-1]))
        for lo in range(0, len(rows), CHUNK):
            chunk = rows[lo : lo + CHUNK]
            logw = (mass_m[chunk] @ incidence).astype(np.float64)
            region_mass = np.exp(np.logaddexp.reduce(logw, axis=1))  # the region's prior mass
            logw -= logw.max(axis=1, keepdims=True)
            w = np.exp(logw)
            w /= w.sum(axis=1, keepdims=True)
            class_post = w @ incidence.T.astype(np.float64)  # (rows, total classes)
            for s in range(len(SLOTS)):
                k = len(lattice.class_masks[s])
                post_s = class_post[:, offsets[s] : offsets[s] + k]
                a = arrays[s][chunk]
                within = np.exp(a - mass[s][chunk][:, lattice.value_class[s]])  # P(v | class)
                inside = post_s[:, lattice.value_class[s]] * within
                if trust < 1.0:
                    prior = np.exp(a)
                    m = region_mass[:, None]
                    other = (1.0 - trust) / (len(lattice.labels) + 1)
                    z = trust * m + other * (1.0 - m)
                    inside = (trust * m * inside + other * (prior - m * inside)) / z
                out[s][chunk] = inside
    return out


def label_mass(lattice: RuleLattice, logp: Sequence[np.ndarray], labels: Sequence[str]) -> np.ndarray:
    """Per text, the probability that the rules route it to ``labels[i]`` (``abstain``: that no rule
    fires) when each slot's value is drawn from its scores independently: the mass of the label's
    region, exact. Only that region's combinations are summed (a twelfth of the lattice on
    average), so 100,000 texts take about a second where every region's mass took fourteen (the
    learning queue, nsmcore.queue). A label no combination reaches has mass 0."""
    arrays, n = _check_scores(logp)
    if len(labels) != n:
        raise DecodingError(f"{n} score rows but {len(labels)} labels")
    _, _, mass = _class_tables(lattice, normalise(arrays))
    mass_m = _stack(mass)
    out = np.zeros(n)
    labels = np.asarray(labels, dtype=object)
    for label in sorted(set(labels.tolist())):
        if label != ABSTAIN and label not in lattice.labels:
            continue
        region = lattice.region(label)
        if region.start == region.stop:
            continue
        incidence = lattice.incidence[:, region]
        rows = np.flatnonzero(labels == label)
        for lo in range(0, len(rows), CHUNK * 4):
            chunk = rows[lo : lo + CHUNK * 4]
            out[chunk] = np.exp(mass_m[chunk] @ incidence).sum(axis=1, dtype=np.float64)
    return np.clip(out, 0.0, 1.0)


def choose_gap(
    gaps: Sequence[float], correct: Sequence[bool], *, grid: Sequence[float] | None = None
) -> float:
    """The abstention gap that maximises accuracy counting abstentions as misses, plus half the
    selective-accuracy gain, on *training* predictions (cross-fitted): it abstains only where
    forcing a label is more often wrong than right. Ties go to the larger gap (fewer abstentions)."""
    gaps = np.asarray(gaps, dtype=float)
    correct = np.asarray(correct, dtype=bool)
    if len(gaps) != len(correct):
        raise DecodingError(f"{len(gaps)} gaps but {len(correct)} outcomes")
    if not len(gaps):
        return float("inf")
    candidates = sorted(set(np.round(gaps, 4)) | {float("inf")}) if grid is None else sorted(grid)
    best, best_score = float("inf"), -1.0
    for t in candidates:
        kept = gaps <= t
        acc = float(correct[kept].sum()) / len(gaps)
        selective = float(correct[kept].mean()) if kept.any() else 0.0
        score = acc + 0.5 * selective
        if score > best_score + 1e-12 or (abs(score - best_score) <= 1e-12 and t > best):
            best, best_score = float(t), score
    return best


def as_log_arrays(rows: Sequence[Mapping[str, Mapping[str, float]]]) -> list[np.ndarray]:
    """Per-slot probability dicts (one per text) as the log arrays :func:`decode` takes; a value
    missing from a dict gets probability 0."""
    out = []
    for slot in SLOTS:
        a = np.array([[float(r[slot.name].get(v, 0.0)) for v in slot.values] for r in rows], dtype=np.float64)
        with np.errstate(divide="ignore"):
            out.append(np.log(a).reshape(len(rows), len(slot.values)))
    return out


__all__ = [
    "SLOT_NAMES",
    "Decoded",
    "DecodingError",
    "RuleLattice",
    "as_log_arrays",
    "choose_gap",
    "decode",
    "label_mass",
    "region_posteriors",
    "region_scores",
    "rule_lattice",
    "rules_tag",
]
