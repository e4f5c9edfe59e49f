"""Supervision beyond gold explications, for the classifier parser: labels through the rules, and
appraisal ratings as weak slot evidence.

A corpus such as crowd-enVent gives, for thousands of texts, the emotion the writer was prompted
with and the writer's appraisal ratings, but no explication. Both say something about the slots:

- **through the rules.** The label says which region of the explication space the text's
  explication probably lies in (the rules are fixed). Training is expectation-maximisation: the
  current per-slot models give each text a distribution over explications; restricted to (or,
  with ``trust`` below 1, pulled toward) the label's region, its per-slot marginals are the soft
  targets of the next fit (:func:`nsmcore.decoding.region_posteriors`, exact over the space).
  Gold explications stay in every fit as hard targets, so the slots keep describing the text
  and do not merely route right.
- **from appraisals.** :data:`APPRAISAL_EVIDENCE` maps ratings to likelihood factors on slot
  values (a writer who rated their own responsibility 4 or 5 makes ``agency=i`` more likely).
  They multiply the per-slot distributions in the E-step only: ratings are used in training,
  never at prediction time (a text to parse has none). Each rule is tested
  (tests/nsmcore/test_supervision.py) and was checked against silver pass A on the 156 silver
  items (docs/training.md gives the tables).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nsmcore.schema import SLOTS
from nsmcore.training_data import LabelledText as LabelledText  # defined beside the records, free of numpy

#: the appraisal rule: (slot, value, factor, conditions); every condition is (rating, op, cut)
#: with op ">=" or "<=" on the 1-5 scale, all must hold. Factors are likelihood ratios against
#: the slot's other values (raised to the training option ``appraisal_weight``).
APPRAISAL_EVIDENCE: tuple[tuple[str, str, float, tuple[tuple[str, str, int], ...]], ...] = (
    # who is responsible for the event -> who did it
    ("agency", "i", 2.0, (("self_responsblt", ">=", 4),)),
    ("agency", "someone-else", 2.0, (("other_responsblt", ">=", 4),)),
    ("agency", "none", 1.5, (("self_responsblt", "<=", 2), ("other_responsblt", "<=", 2))),
    # the target of the evaluation follows responsibility
    ("eval_target", "self", 2.0, (("self_responsblt", ">=", 4), ("other_responsblt", "<=", 2))),
    ("eval_target", "other", 1.5, (("other_responsblt", ">=", 4), ("self_responsblt", "<=", 2))),
    # (un)pleasantness -> evaluation; rated as neither pleasant nor unpleasant -> neither
    ("evaluation", "feel-good", 2.0, (("pleasantness", ">=", 4), ("unpleasantness", "<=", 2))),
    ("evaluation", "feel-bad", 2.0, (("unpleasantness", ">=", 4), ("pleasantness", "<=", 2))),
    ("evaluation", "neither", 1.5, (("pleasantness", "<=", 3), ("unpleasantness", "<=", 3))),
    # sudden and unpredicted -> not known before
    ("knowledge", "not-know", 2.0, (("suddenness", ">=", 4), ("predict_event", "<=", 2))),
    # someone else responsible -> someone did something
    ("trigger", "someone-did-something", 1.5, (("other_responsblt", ">=", 4),)),
)


class SupervisionError(ValueError):
    """Weak supervision that cannot be used; the message names the text and the problem."""


def _holds(ratings: Mapping[str, Any], rating: str, op: str, cut: int) -> bool:
    value = ratings.get(rating)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    if isinstance(value, bool) or not math.isfinite(number):
        return False
    return number >= cut if op == ">=" else number <= cut


def appraisal_factors(ratings: Mapping[str, Any], *, weight: float = 1.0) -> dict[str, dict[str, float]]:
    """The likelihood factors the ratings give, per slot and value (absent: 1). A rating that is
    missing or not a number makes its rules not apply (the text simply gets no evidence)."""
    out: dict[str, dict[str, float]] = {}
    if weight <= 0:
        return out
    for slot, value, factor, conditions in APPRAISAL_EVIDENCE:
        if all(_holds(ratings, rating, op, cut) for rating, op, cut in conditions):
            current = out.setdefault(slot, {}).get(value, 1.0)
            out[slot][value] = current * factor**weight
    return out


def appraisal_log_evidence(rows: Sequence[Mapping[str, Any]], *, weight: float = 1.0) -> list[np.ndarray]:
    """Per slot, an (n, values) array of log factors to add to the per-slot log-probabilities."""
    out = [np.zeros((len(rows), len(slot.values))) for slot in SLOTS]
    index = {slot.name: s for s, slot in enumerate(SLOTS)}
    for i, ratings in enumerate(rows):
        for slot, factors in appraisal_factors(ratings, weight=weight).items():
            s = index[slot]
            for value, factor in factors.items():
                out[s][i, SLOTS[s].values.index(value)] += math.log(factor)
    return out


def check_labelled(rows: Sequence[LabelledText], labels: Sequence[str]) -> list[LabelledText]:
    """The rows, each with a non-empty text and a label the rule set knows (``labels``);
    SupervisionError names the first bad row (1-based) and the labels allowed."""
    out = []
    for position, row in enumerate(rows, 1):
        if not isinstance(row, LabelledText):
            raise SupervisionError(f"labelled text {position}: expected a LabelledText")
        if not isinstance(row.text, str) or not row.text.strip():
            raise SupervisionError(f"labelled text {position}: the text is empty")
        if row.label not in labels:
            raise SupervisionError(
                f"labelled text {position}: label {row.label!r} is not an emotion of the rule set "
                f"({', '.join(labels)})"
            )
        out.append(row)
    return out


def soft_rows(posteriors: Sequence[np.ndarray], s: int, *, weight: float, floor: float = 1e-3):
    """Soft targets of slot ``s`` as (row index, value index, sample weight) arrays: one row per
    text and value with posterior above ``floor`` (how a logistic regression fits soft labels)."""
    post = posteriors[s]
    rows, values = np.nonzero(post > floor)
    return rows, values, post[rows, values] * weight
