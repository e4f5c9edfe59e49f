"""The full explication space: all 1,866,240 slot assignments, and the mapper's regions over it."""

from __future__ import annotations

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


def space_masks(rule_set: RuleSet) -> np.ndarray:
    """The fired bitmask of every assignment, by broadcasting the per-slot tables over the
    twelve-dimensional product instead of materialising the codes."""
    masks = np.full(SHAPE, np.iinfo(np.uint64).max, dtype=np.uint64)
    for s, table in enumerate(rule_set.slot_masks):
        view = [1] * len(SHAPE)
        view[s] = len(table)
        masks &= table.reshape(view)
    return masks.reshape(-1)


def regions(rule_set: RuleSet | None = None) -> dict[str, Any]:
    """Size of every label's region over the full space, the abstain count and multi-rule count."""
    rule_set = rule_set or load_rule_set()
    masks = space_masks(rule_set)
    winners = first_rule(masks)
    counts = np.bincount(winners + 1, minlength=len(rule_set.rules) + 1)
    fired_counts = popcount(masks)
    satisfied = [
        int(np.count_nonzero(masks >> np.uint64(k) & np.uint64(1))) for k in range(len(rule_set.rules))
    ]
    return {
        "total": SPACE_SIZE,
        "rule_set_version": rule_set.version,
        "rule_set_hash": rule_set.content_hash,
        "regions": {rule.emotion: int(counts[k + 1]) for k, rule in enumerate(rule_set.rules)},
        ABSTAIN: int(counts[0]),
        "multi_rule": int(np.count_nonzero(fired_counts > 1)),
        "satisfied": {rule.emotion: satisfied[k] for k, rule in enumerate(rule_set.rules)},
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
