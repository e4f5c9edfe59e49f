"""Two tables of the paper the evaluation report did not show (issue 26).

- :func:`slot_label_table`: per slot value, how many items with that value route to each label
  or abstain (the paper's largest single failure source reads off it: how many
  KNOWLEDGE=not-know items route to surprise). Each cell keeps its items' ids, so a page can
  link a cell to its items.
- :func:`four_cell`: two passes on the items both have: both right, only A, only B, both wrong,
  with McNemar's exact test on the discordant cells (silver-156, A vs B: 38 / 19 / 1 / 98).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nsmcore.evaluation_report import Evidence
from nsmcore.mapper import ABSTAIN
from nsmcore.schema import SLOT_BY_NAME, SLOTS

CELL_IDS = 50  # the ids a cell keeps for its link (the count covers them all)


@dataclass(frozen=True)
class SlotLabelRow:
    slot: str
    value: str
    n: int
    counts: tuple[int, ...]  # per column: the rule set's emotions, then abstain
    ids: tuple[tuple[Any, ...], ...]  # per column: up to CELL_IDS item ids

    @property
    def stated(self) -> bool:
        """A value other than the slot's default: what the explication states."""
        return self.value != SLOT_BY_NAME[self.slot].default

    @property
    def cells(self) -> list[tuple[int, tuple[Any, ...]]]:
        """Per column: the count and the ids it keeps."""
        return list(zip(self.counts, self.ids, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "value": self.value,
            "n": self.n,
            "counts": list(self.counts),
            "ids": [list(i) for i in self.ids],
        }


@dataclass(frozen=True)
class SlotLabelTable:
    """Rows: each value of each slot that some legal item takes; columns: the labels, then abstain.
    Illegal items (no slot values) are left out, and counted in ``illegal``."""

    evidence: Evidence
    columns: tuple[str, ...]
    rows: tuple[SlotLabelRow, ...]
    illegal: int

    def row(self, slot: str, value: str) -> SlotLabelRow | None:
        return next((r for r in self.rows if (r.slot, r.value) == (slot, value)), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": self.evidence.to_dict(),
            "columns": list(self.columns),
            "rows": [r.to_dict() for r in self.rows],
            "illegal": self.illegal,
        }


def slot_label_table(
    evidence: Evidence, labels: Sequence[str], column: np.ndarray, codes: np.ndarray, ids: Sequence[Any] = ()
) -> SlotLabelTable:
    """``column``: per item, the index of its routed label in ``labels`` or ``len(labels)`` for an
    abstention; ``codes``: (n, 12) slot value indices, -1 rows for illegal items; ``ids``: the
    items' ids (1-based positions when not given)."""
    k = len(labels)
    legal = codes[:, 0] >= 0 if len(codes) else np.zeros(0, dtype=bool)
    ids = tuple(ids) or tuple(range(1, len(codes) + 1))
    rows = []
    for s, slot in enumerate(SLOTS):
        for v, value in enumerate(slot.values):
            members = np.flatnonzero(legal & (codes[:, s] == v))
            if not len(members):
                continue
            counts = np.bincount(column[members], minlength=k + 1)
            cells = tuple(
                tuple(ids[i] for i in members[column[members] == c][:CELL_IDS].tolist()) for c in range(k + 1)
            )
            rows.append(SlotLabelRow(slot.name, value, len(members), tuple(int(x) for x in counts), cells))
    return SlotLabelTable(evidence, (*labels, ABSTAIN), tuple(rows), int((~legal).sum()))


@dataclass(frozen=True)
class FourCell:
    """Two passes, on the items both have and both give a reference for."""

    both: int
    only_a: int
    only_b: int
    neither: int
    p_value: float  # McNemar's exact test (two-sided binomial on only_a against only_b)

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "both_right": self.both,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "both_wrong": self.neither,
            "mcnemar_exact_p": self.p_value,
        }


def four_cell(a: Mapping[Any, bool], b: Mapping[Any, bool]) -> FourCell:
    """The split of the items both passes score (id -> right or not; an abstention is not
    right), with McNemar's exact p: under no difference, only_a is binomial(only_a + only_b, 1/2).
    No discordant item: p = 1."""
    shared = a.keys() & b.keys()
    both = sum(1 for i in shared if a[i] and b[i])
    only_a = sum(1 for i in shared if a[i] and not b[i])
    only_b = sum(1 for i in shared if b[i] and not a[i])
    discordant = only_a + only_b
    # binomial(d, 1/2) is symmetric, so the two-sided p is twice the smaller tail: what
    # scipy.stats.binomtest gives, through scipy.special (scipy.stats takes ~0.3 s to import);
    # imported here, as clopper_pearson does, so a process that never computes a p never holds it
    from scipy.special import bdtr

    p = min(1.0, 2 * float(bdtr(min(only_a, only_b), discordant, 0.5))) if discordant else 1.0
    return FourCell(both, only_a, only_b, len(shared) - both - discordant, p)
