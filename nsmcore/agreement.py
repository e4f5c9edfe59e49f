"""Agreement between annotators and passes: plain functions over plain arrays.

A *table* is an integer array of shape (items, coders, slots) holding each slot's value index
(``Slot.index``) and ``MISSING`` (-1) where a coder gave no value. Per slot:

- raw agreement: the share of agreeing pairs among all pairable pairs (for two coders, the share
  of items both coded on which they agree);
- Krippendorff's alpha through the ``krippendorff`` package (nominal by default; intensity may be
  read as ordinal), for two or more coders with missing values;
- alpha is *undefined* when the slot shows no variation, or no item has two values: reported with
  the reason, never as 0 or 1;
- a seeded bootstrap 95% interval over items;
- a slot is *variance-degenerate* (the paper's word for EXPERIENCER) when alpha is undefined or
  rests on fewer than ``MIN_MINORITY`` values other than the slot's majority value: alpha then
  turns on a handful of values (one stray value took silver-156's EXPERIENCER to 0). A slot with
  little variation that its coders agree on (silver-156's BODY, 6 such values, alpha 1.0) is not.

Also conflicts (items and slots where coders differ, the median number of differing slots per
disagreeing pair), directional flows between two passes, and retention of a prefill (anchoring).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nsmcore.schema import SLOT_NAMES, SLOTS

MISSING = -1
LEVELS = ("nominal", "ordinal")
MIN_MINORITY = 5  # values other than the majority value below which alpha is variance-degenerate


@dataclass(frozen=True)
class SlotAgreement:
    slot: str
    level: str
    items: int  # items with at least two values
    pairs: int  # pairable value pairs
    raw: float | None
    alpha: float | None
    undefined: str = ""  # why alpha is undefined; empty when it is defined
    ci_low: float | None = None
    ci_high: float | None = None
    majority_value: str = ""
    majority_share: float | None = None  # share of all pairable values that are the majority value
    minority: int = 0  # pairable values other than the majority value

    @property
    def degenerate(self) -> bool:
        """Variance-degenerate: alpha undefined, or resting on fewer than MIN_MINORITY values
        other than the majority value."""
        return self.alpha is None or self.minority < MIN_MINORITY

    def as_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "level": self.level,
            "items": self.items,
            "pairs": self.pairs,
            "raw": self.raw,
            "alpha": self.alpha,
            "undefined": self.undefined,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "majority_value": self.majority_value,
            "majority_share": self.majority_share,
            "minority": self.minority,
            "degenerate": self.degenerate,
        }


@dataclass(frozen=True)
class AgreementReport:
    slots: tuple[SlotAgreement, ...]
    coders: int
    items: int
    bootstrap: int
    seed: int

    @property
    def mean_alpha(self) -> float | None:
        """Mean over the slots where alpha is defined."""
        values = [s.alpha for s in self.slots if s.alpha is not None]
        return float(np.mean(values)) if values else None

    @property
    def degenerate_slots(self) -> tuple[str, ...]:
        """The slots the mean without degenerate slots leaves out (see ``SlotAgreement.degenerate``)."""
        return tuple(s.slot for s in self.slots if s.degenerate)

    @property
    def mean_alpha_without_degenerate(self) -> float | None:
        values = [s.alpha for s in self.slots if not s.degenerate]
        return float(np.mean(values)) if values else None

    @property
    def mean_raw(self) -> float | None:
        values = [s.raw for s in self.slots if s.raw is not None]
        return float(np.mean(values)) if values else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "coders": self.coders,
            "items": self.items,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "mean_alpha": self.mean_alpha,
            "mean_alpha_without_degenerate": self.mean_alpha_without_degenerate,
            "degenerate_slots": list(self.degenerate_slots),
            "min_minority": MIN_MINORITY,
            "mean_raw": self.mean_raw,
            "slots": [s.as_dict() for s in self.slots],
        }


def value_counts(codes: np.ndarray, n_values: int) -> np.ndarray:
    """(items, coders) codes -> (items, values) counts; MISSING is not counted."""
    codes = np.asarray(codes)
    counts = np.zeros((codes.shape[0], n_values), dtype=np.int64)
    for coder in range(codes.shape[1]):
        column = codes[:, coder]
        present = column >= 0
        np.add.at(counts, (np.nonzero(present)[0], column[present]), 1)
    return counts


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """Per item coincidence matrices (items, V, V) of pairable items (at least two values)."""
    m = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    outer[:, np.arange(counts.shape[1]), np.arange(counts.shape[1])] -= counts
    return outer / (m - 1)[:, None, None]


def _patterns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a counts matrix and how many items have each."""
    base = int(counts.max()) + 1
    keys = counts @ (base ** np.arange(counts.shape[1], dtype=np.int64))
    _, first, weight = np.unique(keys, return_index=True, return_counts=True)
    return counts[first], weight


def _delta2(n_v: np.ndarray, level: str) -> np.ndarray:
    """Squared distances between values given the value totals; shape (..., V, V)."""
    v = n_v.shape[-1]
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(v), (*n_v.shape[:-1], v, v))
    cum = np.cumsum(n_v, axis=-1)
    lo = np.minimum.outer(np.arange(v), np.arange(v))
    hi = np.maximum.outer(np.arange(v), np.arange(v))
    # sum of n_g for g between c and k inclusive, minus half of n_c + n_k
    before = np.concatenate([np.zeros((*n_v.shape[:-1], 1)), cum[..., :-1]], axis=-1)
    between = cum[..., hi] - before[..., lo]
    half = (n_v[..., :, None] + n_v[..., None, :]) / 2
    return (between - half) ** 2


def alpha_from_coincidences(o: np.ndarray, level: str = "nominal") -> np.ndarray:
    """Alpha for one or many coincidence matrices (..., V, V); NaN where it is undefined."""
    n_v = o.sum(axis=-1)
    n = n_v.sum(axis=-1)
    d2 = _delta2(n_v, level)
    observed = (o * d2).sum(axis=(-2, -1))
    expected = (n_v[..., :, None] * n_v[..., None, :] * d2).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * observed / expected, np.nan)


def slot_agreement(
    codes: np.ndarray,
    slot: str,
    *,
    level: str = "nominal",
    bootstrap: int = 1000,
    seed: int = 0,
) -> SlotAgreement:
    """Agreement on one slot from (items, coders) value codes."""
    import krippendorff

    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; levels: {', '.join(LEVELS)}")
    values = SLOTS[SLOT_NAMES.index(slot)].values
    counts = value_counts(codes, len(values))
    counts = counts[counts.sum(axis=1) >= 2]
    items = int(counts.shape[0])
    if not items:
        return SlotAgreement(slot, level, 0, 0, None, None, "no item has values from two coders")
    # Items are summed by their distinct count patterns (few, whatever the number of items):
    # the coincidences, and the bootstrap, which resamples items by resampling patterns.
    patterns, weight = _patterns(counts)
    pattern_o = _coincidences(patterns)
    o = np.tensordot(weight, pattern_o, axes=1)
    n = float(o.sum())
    m = counts.sum(axis=1)
    pairs = int((m * (m - 1) // 2).sum())
    raw = float(np.trace(o) / n)
    totals = counts.sum(axis=0)
    top = int(totals.argmax())
    majority = (values[top], float(totals[top] / totals.sum()), int(totals.sum() - totals[top]))
    if np.count_nonzero(totals) < 2:
        reason = f"no variation: every value is {values[top]}"
        return SlotAgreement(slot, level, items, pairs, raw, None, reason, None, None, *majority)
    alpha = float(krippendorff.alpha(value_counts=counts, level_of_measurement=level))
    low = high = None
    if bootstrap:
        draws = np.random.default_rng(seed).multinomial(items, weight / items, size=bootstrap)
        sampled = (draws @ pattern_o.reshape(len(patterns), -1)).reshape(bootstrap, len(values), len(values))
        alphas = alpha_from_coincidences(sampled, level)
        if np.isfinite(alphas).any():
            low, high = (float(x) for x in np.nanpercentile(alphas, [2.5, 97.5]))
    return SlotAgreement(slot, level, items, pairs, raw, alpha, "", low, high, *majority)


def agreement(
    table: np.ndarray,
    *,
    levels: dict[str, str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AgreementReport:
    """Per-slot agreement over a (items, coders, slots) table."""
    table = np.asarray(table)
    if table.ndim != 3 or table.shape[2] != len(SLOTS):
        raise ValueError(f"expected a table of shape (items, coders, {len(SLOTS)}), got {table.shape}")
    levels = levels or {}
    unknown = set(levels) - set(SLOT_NAMES)
    if unknown:
        raise ValueError(f"unknown slot(s) {', '.join(sorted(unknown))}")
    slots = tuple(
        slot_agreement(
            table[:, :, s], name, level=levels.get(name, "nominal"), bootstrap=bootstrap, seed=seed + s
        )
        for s, name in enumerate(SLOT_NAMES)
    )
    return AgreementReport(slots, int(table.shape[1]), int(table.shape[0]), bootstrap, seed)


@dataclass(frozen=True, eq=False)
class Conflicts:
    """Items where coders differ: ``rows`` are their row indices in the table, ``differs`` (one
    row per conflict, one column per slot) says which slots differ."""

    rows: np.ndarray
    differs: np.ndarray
    disagreeing_pairs: int
    median_differing_slots: float | None
    per_slot: dict[str, int] = field(default_factory=dict)

    @property
    def items(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self.rows)

    @property
    def slots(self) -> tuple[tuple[str, ...], ...]:
        names = np.array(SLOT_NAMES)
        return tuple(tuple(names[row]) for row in self.differs)

    def __len__(self) -> int:
        return int(self.rows.size)


def conflicts(table: np.ndarray) -> Conflicts:
    """Items and slots where two coders who both gave a value differ."""
    table = np.asarray(table)
    n_items, n_coders, _ = table.shape
    differs = np.zeros((n_items, len(SLOTS)), dtype=bool)
    differing_per_pair: list[np.ndarray] = []
    for a in range(n_coders):
        for b in range(a + 1, n_coders):
            both = (table[:, a, :] >= 0) & (table[:, b, :] >= 0)
            pair = both & (table[:, a, :] != table[:, b, :])
            differs |= pair
            count = pair.sum(axis=1)
            differing_per_pair.append(count[count > 0])
    counts = np.concatenate(differing_per_pair) if differing_per_pair else np.zeros(0)
    rows = np.nonzero(differs.any(axis=1))[0]
    return Conflicts(
        rows=rows,
        differs=differs[rows],
        disagreeing_pairs=int(counts.size),
        median_differing_slots=float(np.median(counts)) if counts.size else None,
        per_slot={name: int(differs[:, s].sum()) for s, name in enumerate(SLOT_NAMES)},
    )


@dataclass(frozen=True)
class Flow:
    slot: str
    a: str
    b: str
    count: int
    share_of_a: float  # of the items where pass A has value a


def flows(a: np.ndarray, b: np.ndarray, *, min_count: int = 1) -> list[Flow]:
    """Directional flows between two passes over the same items, (items, slots) each: per slot,
    how often A has value x where B has y (x != y), most frequent first."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"the two passes differ in shape: {a.shape} and {b.shape}")
    out = []
    for s, slot in enumerate(SLOTS):
        both = (a[:, s] >= 0) & (b[:, s] >= 0)
        v = len(slot.values)
        table = np.bincount(a[both, s].astype(np.int64) * v + b[both, s], minlength=v * v).reshape(v, v)
        totals = table.sum(axis=1)
        for x, y in zip(*np.nonzero(table), strict=True):
            n = int(table[x, y])
            if x != y and n >= min_count:
                out.append(Flow(slot.name, slot.values[x], slot.values[y], n, n / int(totals[x])))
    return sorted(out, key=lambda f: (-f.count, SLOT_NAMES.index(f.slot), f.a, f.b))


def retention(submitted: np.ndarray, prefill: np.ndarray) -> dict[str, float | None]:
    """Per slot, the share of submitted values equal to the prefill, over items that had one."""
    submitted, prefill = np.asarray(submitted), np.asarray(prefill)
    out: dict[str, float | None] = {}
    for s, slot in enumerate(SLOT_NAMES):
        shown = (prefill[:, s] >= 0) & (submitted[:, s] >= 0)
        out[slot] = float((submitted[shown, s] == prefill[shown, s]).mean()) if shown.any() else None
    return out


def encode_rows(rows: Sequence[dict[str, str] | None]) -> np.ndarray:
    """Explication dicts (or None for missing) -> (len(rows), 12) codes."""
    lookup = [{v: i for i, v in enumerate(slot.values)} for slot in SLOTS]
    out = np.full((len(rows), len(SLOTS)), MISSING, dtype=np.int16)
    for r, row in enumerate(rows):
        if row is not None:
            out[r] = [lookup[s].get(row.get(name), MISSING) for s, name in enumerate(SLOT_NAMES)]
    return out
