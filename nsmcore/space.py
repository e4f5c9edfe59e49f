"""The full explication space: all 1,866,240 slot assignments, and the mapper's regions over it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import product
from typing import Any

import numpy as np

from nsmcore.mapper import ABSTAIN, RuleSet, first_rule, load_rule_set, popcount
from nsmcore.schema import SLOTS, SPACE_SIZE

SHAPE: tuple[int, ...] = tuple(len(slot.values) for slot in SLOTS)


def all_codes() -> np.ndarray:
    """Every assignment as an (1866240, 12) int8 array of value indices, in mixed-radix order."""
    return np.indices(SHAPE, dtype=np.int8).reshape(len(SHAPE), -1).T


def iter_assignments() -> Iterator[dict[str, str]]:
    """Every assignment as a slot -> value dict (the slow, obviously-correct enumeration)."""
    names = [slot.name for slot in SLOTS]
    for values in product(*(slot.values for slot in SLOTS)):
        yield dict(zip(names, values, strict=True))


#: assignments per block in :func:`regions`: 2**16 masks are half a MiB, so the temporaries stay
#: a few MiB (the whole space at once peaked at 54 MiB, and a web process's allocator keeps about
#: 20 MiB of such a peak for its life), while each block is still large enough for numpy's speed
BLOCK = 2**16


def _blocks(rule_set: RuleSet) -> Iterator[np.ndarray]:
    """The fired bitmasks of the space in mixed-radix order, a block at a time: the leading slots
    are fixed (their masks ANDed as one number) and the trailing slots broadcast."""
    lead = 0
    while math.prod(SHAPE[lead:]) > BLOCK:
        lead += 1
    trailing = space_masks(rule_set, lead)
    for prefix in product(*(range(n) for n in SHAPE[:lead])):
        fixed = np.iinfo(np.uint64).max
        for s, value in enumerate(prefix):
            fixed &= int(rule_set.slot_masks[s][value])
        yield trailing & np.uint64(fixed)


def space_masks(rule_set: RuleSet, first: int = 0) -> np.ndarray:
    """The fired bitmask of every assignment of the slots from ``first`` on (all twelve by
    default: 14 MiB), as if the slots before it allowed everything, by broadcasting the per-slot
    tables over the product instead of materialising the codes."""
    shape = SHAPE[first:]
    masks = np.full(shape, np.iinfo(np.uint64).max, dtype=np.uint64)
    for s, table in enumerate(rule_set.slot_masks[first:]):
        view = [1] * len(shape)
        view[s] = len(table)
        masks &= table.reshape(view)
    return masks.reshape(-1)


def regions(rule_set: RuleSet | None = None) -> dict[str, Any]:
    """Size of every label's region over the full space, the abstain count and multi-rule count."""
    rule_set = rule_set or load_rule_set()
    n = len(rule_set.rules)
    counts = np.zeros(n + 1, dtype=np.int64)
    satisfied = np.zeros(n, dtype=np.int64)
    multi = 0
    bits = [np.uint64(1) << np.uint64(k) for k in range(n)]
    for masks in _blocks(rule_set):
        counts += np.bincount(first_rule(masks) + 1, minlength=n + 1)
        multi += int(np.count_nonzero(popcount(masks) > 1))
        satisfied += [np.count_nonzero(masks & bit) for bit in bits]
    return {
        "total": SPACE_SIZE,
        "rule_set_version": rule_set.version,
        "rule_set_hash": rule_set.content_hash,
        "regions": {rule.emotion: int(counts[k + 1]) for k, rule in enumerate(rule_set.rules)},
        ABSTAIN: int(counts[0]),
        "multi_rule": multi,
        "satisfied": {rule.emotion: int(satisfied[k]) for k, rule in enumerate(rule_set.rules)},
    }


def regions_python(rule_set: RuleSet | None = None) -> dict[str, Any]:
    """The same figures by a plain Python loop over the space (the benchmark's baseline)."""
    rule_set = rule_set or load_rule_set()
    rules = [(rule.emotion, list(rule.conditions.items())) for rule in rule_set.rules]
    region = {emotion: 0 for emotion, _ in rules}
    abstain = multi = 0
    for assignment in iter_assignments():
        fired = [e for e, conds in rules if all(assignment[s] in ok for s, ok in conds)]
        if not fired:
            abstain += 1
            continue
        region[fired[0]] += 1
        multi += len(fired) > 1
    return {"regions": region, ABSTAIN: abstain, "multi_rule": multi}
