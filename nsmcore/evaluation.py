"""The evaluation suite (SPEC section 6; the paper's evaluation and mapper appendix).

Plain functions over plain data. :func:`route_items` routes (explication, reference label)
items once and keeps what every figure needs as arrays: each item's fired set as a bitmask over
the rules, its abstention type, its winning rule and its reference label. :func:`evaluate` then
computes, from those arrays alone:

- accuracy, abstention rate by type (illegal, schema-residue, no-rule) and selective accuracy,
  each with an exact Clopper-Pearson interval (scipy's ``binomtest``);
- per-emotion accuracy and selective accuracy with intervals;
- the row-normalised confusion matrix with an abstain column, and the prominent off-diagonal
  flows (gold i routed to j, n, share of i);
- multi-rule counts and which rule overruled which ("shame ahead of guilt on 66 items");
- flag and residue rates;
- distributional scoring (single-winner, uniform-fired, priority-decay), where an abstained item
  is never covered;
- priority-order sensitivity: the canonical order, named swaps and N seeded random orders;
- causal consistency under single-slot edits over the item set's explications.

:func:`counterfactual` scores the counterfactual benchmark (pairs x, x' with an edit family, target
slots and expected emotions) from a parser's explications of both texts.

Every section carries its :class:`Evidence`: the item set's tier and size, the rule set version
and hash, and the pass it was computed on. Every result is a dataclass with ``to_dict()``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nsmcore.evaluation_report import (
    Confusion,
    Consistency,
    Distributional,
    EmotionRow,
    EvaluationError,
    EvaluationReport,
    Evidence,
    FlagRates,
    Flow,
    Flows,
    Headline,
    MultiRule,
    OrderAccuracy,
    Override,
    PerEmotion,
    Proportion,
    Sensitivity,
)
from nsmcore.evaluation_tables import slot_label_table
from nsmcore.mapper import (
    ABSTAIN,
    ABSTENTION_TYPES,
    ILLEGAL,
    NO_RULE,
    SCHEMA_RESIDUE,
    RuleSet,
    first_rule,
    load_rule_set,
    route_batch,
    route_codes,
)
from nsmcore.schema import SLOT_NAMES, SLOTS, Explication, canonical_value
from nsmcore.scoring import SCHEMES, score_distributions, score_masks

ROUTED = 0
# abstention type -> its code in RoutedItems.types (0 is routed)
TYPE_CODES: dict[str, int] = {t: k + 1 for k, t in enumerate(ABSTENTION_TYPES)}
FLAGS: tuple[str, ...] = ("two-construals", "unrecoverable", "out-of-scope")
DEFAULT_SWAPS: tuple[tuple[str, str], ...] = (("guilt", "shame"),)
_VALUE_INDEX: dict[str, dict[str, int]] = {s.name: {v: k for k, v in enumerate(s.values)} for s in SLOTS}


# Routed items ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutedItems:
    """Items routed once, as arrays (position i is item i).

    masks: fired set, uint64 (bit k = rule k; 0 for an illegal item); types: 0 routed, else
    ``TYPE_CODES[abstention type]``; winners: winning rule index or -1; gold: the reference
    label's rule index; codes: (n, 12) slot value indices (-1 rows for illegal items); residue:
    whether the item carries a residue; flags: per item, its flags; ids: per item, its id or None.
    """

    rule_set: RuleSet
    masks: np.ndarray
    types: np.ndarray
    winners: np.ndarray
    gold: np.ndarray
    codes: np.ndarray
    residue: np.ndarray
    flags: tuple[tuple[str, ...], ...] = ()
    ids: tuple[Any, ...] = ()
    #: (n, K) the parser's own label distribution per item (rows over the rule set's emotions),
    #: when every item came with one (``label_distribution``); scored beside the mapper's schemes
    distributions: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.gold)


def _where(position: int, item_id: Any) -> str:
    return f"item {position + 1}" + (f" (id {item_id!r})" if item_id is not None else "")


def _gold_index(label: Any, labels: Sequence[str], where: str) -> int:
    if label not in labels:
        shown = repr(label) if label is not None else "none given"
        raise EvaluationError(f"{where}: reference_label {shown} is not one of: {', '.join(labels)}")
    return labels.index(label)


def _flags(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(f, str) for f in raw):
        raise EvaluationError(f"{where}: flags must be a list of strings, got {raw!r}")
    unknown = [f for f in raw if f not in FLAGS]
    if unknown:
        raise EvaluationError(f"{where}: unknown flag {unknown[0]!r}; flags: {', '.join(FLAGS)}")
    return tuple(dict.fromkeys(raw))


def route_items(items: Iterable[Mapping[str, Any]], rule_set: RuleSet | None = None) -> RoutedItems:
    """Route items given as plain data, each a mapping with ``explication`` (a JSON object or an
    Explication, residue and notes inside; None for an unreadable parser output: illegal),
    ``reference_label`` (one of the rule set's emotions), and optionally ``id`` and ``flags``.
    An illegal explication is data (it abstains as illegal); a missing or unknown reference
    label, or bad flags, raise EvaluationError naming the item."""
    rule_set = rule_set or load_rule_set()
    labels = rule_set.emotions
    items = list(items)
    objs, gold, flags, ids = [], [], [], []
    for position, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise EvaluationError(
                f"item {position + 1}: expected an object, got {type(item).__name__}", position
            )
        item_id = item.get("id")
        where = _where(position, item_id)
        if "explication" not in item:
            raise EvaluationError(f"{where}: no explication", position)
        try:
            gold.append(_gold_index(item.get("reference_label"), labels, where))
            flags.append(_flags(item.get("flags"), where))
        except EvaluationError as error:
            raise EvaluationError(str(error), position) from None
        objs.append(item["explication"])
        ids.append(item_id)
    distributions = _distributions(items, labels)
    routings = route_batch(objs, rule_set)
    n = len(objs)
    masks = np.zeros(n, dtype=np.uint64)
    types = np.zeros(n, dtype=np.int8)
    winners = np.full(n, -1, dtype=np.int16)
    codes = np.full((n, len(SLOTS)), -1, dtype=np.int8)
    residue = np.zeros(n, dtype=bool)
    bit = {emotion: 1 << k for k, emotion in enumerate(labels)}
    for i, (obj, routing) in enumerate(zip(objs, routings, strict=True)):
        masks[i] = sum(bit[e] for e in routing.fired)
        types[i] = TYPE_CODES.get(routing.abstention_type, ROUTED)
        if routing.rule_index is not None:
            winners[i] = routing.rule_index
        if routing.abstention_type == ILLEGAL:
            raw_residue = obj.get("residue") if isinstance(obj, Mapping) else None
            residue[i] = isinstance(raw_residue, str) and bool(raw_residue.strip())
            continue
        if isinstance(obj, Explication):
            codes[i] = obj.codes()
            residue[i] = bool(obj.residue.strip())
        else:  # a legal JSON object: its values (or their aliases) are in the slots' sets
            codes[i] = [_VALUE_INDEX[s][canonical_value(s, obj[s])] for s in SLOT_NAMES]
            residue[i] = bool(obj.get("residue", "").strip())
    return RoutedItems(
        rule_set,
        masks,
        types,
        winners,
        np.asarray(gold, dtype=np.int16),
        codes,
        residue,
        tuple(flags),
        tuple(ids),
        distributions,
    )


def _distributions(items: list[Mapping[str, Any]], labels: Sequence[str]) -> np.ndarray | None:
    """The items' ``label_distribution`` (label -> probability; other keys, such as the
    abstention's mass, are left out and each row renormalised over ``labels``) as an (n, K)
    array; None unless every item has one. A row of no mass is uniform; a negative or non-number
    probability raises EvaluationError naming the item."""
    if not items or not all(isinstance(item.get("label_distribution"), Mapping) for item in items):
        return None
    out = np.zeros((len(items), len(labels)))
    for i, item in enumerate(items):
        given = item["label_distribution"]
        for k, label in enumerate(labels):
            value = given.get(label, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise EvaluationError(
                    f"{_where(i, item.get('id'))}: label_distribution[{label!r}] = {value!r} is not a "
                    "probability", i,
                )  # fmt: skip
            out[i, k] = value
        total = out[i].sum()
        out[i] = out[i] / total if total > 0 else 1.0 / len(labels)
    return out


def routed_from_codes(
    codes: np.ndarray,
    gold: np.ndarray,
    rule_set: RuleSet | None = None,
    *,
    residue: np.ndarray | None = None,
) -> RoutedItems:
    """Route legal explications already encoded as (n, 12) value indices (``mapper.encode``),
    with gold label indices and an optional residue flag per item: the vectorised path."""
    rule_set = rule_set or load_rule_set()
    codes = np.asarray(codes, dtype=np.int8)
    winners, masks = route_codes(codes, rule_set)
    residue = np.zeros(len(codes), dtype=bool) if residue is None else np.asarray(residue, dtype=bool)
    types = np.where(residue, TYPE_CODES[SCHEMA_RESIDUE], np.where(masks == 0, TYPE_CODES[NO_RULE], ROUTED))
    winners = np.where(types == ROUTED, winners, -1).astype(np.int16)
    gold = np.asarray(gold, dtype=np.int16)
    if len(gold) != len(codes):
        raise EvaluationError(f"{len(codes)} explications but {len(gold)} reference labels")
    if len(gold) and (gold.min() < 0 or gold.max() >= len(rule_set.rules)):
        raise EvaluationError(f"reference label indices must lie in [0, {len(rule_set.rules)})")
    return RoutedItems(rule_set, masks, types.astype(np.int8), winners, gold, codes, residue)


# Priority orders -------------------------------------------------------------------------------


def _bits(masks: np.ndarray, k: int) -> np.ndarray:
    """(len(masks), k) booleans: bit j of each mask."""
    return (
        (np.asarray(masks, dtype=np.uint64)[:, None] >> np.arange(k, dtype=np.uint64)) & np.uint64(1)
    ).astype(bool)


def order_winners(masks: np.ndarray, order: Sequence[int]) -> np.ndarray:
    """The winning rule (index in the canonical order) of each fired set when the rules are
    tried in ``order`` (a permutation of rule indices, highest priority first); -1 where none
    fired. Equals routing under a rule set whose rules are listed in that order."""
    order = np.asarray(order, dtype=np.int64)
    k = len(order)
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k)
    bits = _bits(masks, k)
    winners = np.where(bits, rank[None, :], k).argmin(axis=1)
    return np.where(bits.any(axis=1), winners, -1)


def order_correct_counts(masks: np.ndarray, gold: np.ndarray, orders: np.ndarray, k: int) -> np.ndarray:
    """Per order (rows of ``orders``), how many items route to their gold rule. ``masks`` and
    ``gold`` are the items that route under some order (legal, no residue); each distinct fired
    set is decided once per order, so the cost does not grow with the number of items."""
    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    if len(masks) == 0:
        return np.zeros(len(orders), dtype=np.int64)
    distinct, inverse = np.unique(np.asarray(masks, dtype=np.uint64), return_inverse=True)
    hits = np.zeros((len(distinct), k), dtype=np.int64)  # items with fired set d and gold rule j
    np.add.at(hits, (inverse.reshape(-1), np.asarray(gold, dtype=np.int64)), 1)
    bits = _bits(distinct, k)
    any_fired = bits.any(axis=1)
    ranks = np.empty_like(orders)
    ranks[np.arange(len(orders))[:, None], orders] = np.arange(k)
    ranks = ranks.astype(np.int8 if k < 127 else np.int16)
    out = np.empty(len(orders), dtype=np.int64)
    step = max(1, 4_000_000 // max(1, len(distinct) * k))  # bound the (orders, sets, rules) block
    rows = np.arange(len(distinct))[None, :]
    for start in range(0, len(orders), step):
        block = ranks[start : start + step]
        winners = np.where(bits[None, :, :], block[:, None, :], k).argmin(axis=2)
        out[start : start + step] = (hits[rows, winners] * any_fired[None, :]).sum(axis=1)
    return out


def swapped_order(rule_set: RuleSet, a: str, b: str) -> list[int]:
    emotions = rule_set.emotions
    for e in (a, b):
        if e not in emotions:
            raise EvaluationError(f"swap {a}:{b}: {e!r} is not a rule of v{rule_set.version}")
    order = list(range(len(emotions)))
    i, j = emotions.index(a), emotions.index(b)
    order[i], order[j] = order[j], order[i]
    return order


def random_orders(k: int, n: int, seed: int) -> np.ndarray:
    """``n`` random permutations of ``k`` rules, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(k), (n, 1)), axis=1)


# Single-slot edits -----------------------------------------------------------------------------


def slot_edit_consistency(codes: np.ndarray, rule_set: RuleSet) -> tuple[int, int, int, int]:
    """(distinct explications, edits, consistent edits, edits that change the label) over every
    single-slot edit of each distinct row of ``codes`` (legal explications, value indices)."""
    k = len(rule_set.rules)
    if len(codes) == 0:
        return 0, 0, 0, 0
    radix = np.cumprod([1] + [len(s.values) for s in SLOTS[:-1]], dtype=np.int64)
    _, first = np.unique(codes.astype(np.int64) @ radix, return_index=True)
    distinct = codes[first]
    tables = rule_set.slot_masks
    per_slot = [tables[s][distinct[:, s]] for s in range(len(SLOTS))]
    # the fired set with slot s left out: AND of the prefix before s and the suffix after it
    full = np.uint64((1 << k) - 1)
    prefix = [np.full(len(distinct), full, dtype=np.uint64)]
    for masks in per_slot[:-1]:
        prefix.append(prefix[-1] & masks)
    suffix = [np.full(len(distinct), full, dtype=np.uint64)]
    for masks in reversed(per_slot[1:]):
        suffix.append(suffix[-1] & masks)
    suffix.reverse()
    before = prefix[-1] & per_slot[-1]
    winner_before = first_rule(before)
    edits = consistent = changes = 0
    for s, slot in enumerate(SLOTS):
        # read from the rule conditions, not from the tables the routing uses
        reads = np.uint64(
            sum(1 << j for j, rule in enumerate(rule_set.rules) if slot.name in rule.conditions)
        )
        others = prefix[s] & suffix[s]
        for v in range(len(slot.values)):
            edited = distinct[:, s] != v
            after = others[edited] & tables[s][v]
            edits += int(edited.sum())
            consistent += int((((before[edited] ^ after) & ~reads) == 0).sum())
            changes += int((first_rule(after) != winner_before[edited]).sum())
    return len(distinct), edits, consistent, changes


# The evaluation --------------------------------------------------------------------------------


def evaluate(
    routed: RoutedItems,
    *,
    tier: str,
    pass_name: str,
    orders: int = 200,
    seed: int = 0,
    swaps: Sequence[tuple[str, str]] = DEFAULT_SWAPS,
    decay: float = 0.5,
    alpha: float = 0.05,
    flows_top: int = 10,
    confidence: float = 0.95,
    consistency: bool = True,
) -> EvaluationReport:
    """Every figure of the suite over routed items (see the module docstring)."""
    if len(routed) == 0:
        raise EvaluationError("no items to evaluate")
    if orders < 0:
        raise EvaluationError(f"orders must be >= 0, got {orders}")
    rule_set = routed.rule_set
    labels = rule_set.emotions
    k = len(labels)
    n = len(routed)
    evidence = Evidence(tier, n, rule_set.version, rule_set.content_hash, pass_name)

    def prop(hits: int, total: int) -> Proportion:
        return Proportion.of(int(hits), int(total), confidence)

    is_routed = routed.types == ROUTED
    gold = routed.gold.astype(np.int64)
    correct = is_routed & (routed.winners == gold)
    n_routed = int(is_routed.sum())
    gold_bit = np.left_shift(np.uint64(1), gold.astype(np.uint64))
    in_fired = is_routed & ((routed.masks & gold_bit) != 0)
    headline = Headline(
        evidence,
        prop(correct.sum(), n),
        prop(n - n_routed, n),
        {t: prop((routed.types == code).sum(), n) for t, code in TYPE_CODES.items()},
        prop(correct.sum(), n_routed),
        prop(in_fired.sum(), n),
        prop(in_fired.sum(), n_routed),
    )

    columns = np.where(is_routed, routed.winners, k).astype(np.int64)
    counts = np.zeros((k, k + 1), dtype=np.int64)
    np.add.at(counts, (gold, columns), 1)
    confusion = Confusion(
        evidence, labels, (*labels, ABSTAIN), tuple(tuple(int(c) for c in row) for row in counts)
    )
    rows = []
    for j, emotion in enumerate(labels):
        total = int(counts[j].sum())
        routed_j = total - int(counts[j, k])
        hits = int(counts[j, j])
        rows.append(EmotionRow(emotion, total, routed_j, prop(hits, total), prop(hits, routed_j)))

    flows = [
        Flow(labels[i], labels[j], int(counts[i, j]), float(counts[i, j] / counts[i].sum()))
        for i in range(k)
        for j in range(k)
        if i != j and counts[i, j] > 0
    ]
    flows.sort(key=lambda f: (-f.n, -f.share_of_gold, labels.index(f.gold), labels.index(f.routed)))

    fired_count = np.bitwise_count(routed.masks)
    multi = fired_count > 1
    # Which rule ran ahead of which: every pair of rules that fired together, the higher one ahead,
    # over every item where both fired (issue 26: counting only the routed ones hid the pairs of
    # residue-abstained items; counting only the winner's pairs hid, on an item firing shame, guilt
    # and sadness, that guilt's rule ran ahead of sadness's). Bit k is rule k, in priority order.
    fired_bits = _bits(routed.masks[multi], k).astype(np.int64)
    together = fired_bits.T @ fired_bits  # [i, j]: items on which rules i and j both fired
    abstained_bits = fired_bits[~is_routed[multi]]
    anyway = abstained_bits.T @ abstained_bits
    pairs = {
        (w, j): (int(together[w, j]), int(anyway[w, j]))
        for w in range(k)
        for j in range(w + 1, k)
        if together[w, j]
    }
    overrides = tuple(
        Override(labels[w], labels[j], c, a)
        for (w, j), (c, a) in sorted(pairs.items(), key=lambda kv: (-kv[1][0], kv[0]))
    )
    multi_rule = MultiRule(
        evidence,
        prop(multi.sum(), n),
        int((multi & is_routed).sum()),
        int((multi & ~is_routed).sum()),
        overrides,
    )

    flag_counts = Counter(f for item_flags in routed.flags for f in item_flags)
    flag_rates = FlagRates(
        evidence, prop(routed.residue.sum(), n), {f: prop(flag_counts[f], n) for f in FLAGS}
    )

    abstained = ~is_routed
    distributional = Distributional(
        evidence,
        decay,
        alpha,
        tuple(
            score_masks(routed.masks, gold, abstained, labels, scheme=s, decay=decay, alpha=alpha)
            for s in SCHEMES
        )
        + (
            (score_distributions(routed.distributions, routed.masks, gold, abstained, labels),)
            if routed.distributions is not None
            else ()
        ),
    )

    sensitivity = _sensitivity(routed, evidence, orders, seed, swaps, prop)
    consistency_section = None
    if consistency:
        legal = routed.types != TYPE_CODES[ILLEGAL]
        distinct, edits, consistent, changes = slot_edit_consistency(routed.codes[legal], rule_set)
        consistency_section = Consistency(evidence, distinct, prop(consistent, edits), changes)

    return EvaluationReport(
        evidence,
        headline,
        PerEmotion(evidence, tuple(rows)),
        confusion,
        Flows(evidence, tuple(flows[:flows_top])),
        multi_rule,
        flag_rates,
        distributional,
        sensitivity,
        consistency_section,
        slot_labels=slot_label_table(evidence, labels, columns, routed.codes, routed.ids),
    )


def _sensitivity(
    routed: RoutedItems,
    evidence: Evidence,
    orders: int,
    seed: int,
    swaps: Sequence[tuple[str, str]],
    prop: Any,
) -> Sensitivity:
    rule_set = routed.rule_set
    labels = rule_set.emotions
    k = len(labels)
    n = len(routed)
    # Illegal and residue items abstain and no-rule items fire nothing, under any order.
    routable = routed.types == ROUTED
    masks = routed.masks[routable]
    gold = routed.gold[routable].astype(np.int64)
    named = [("canonical", list(range(k)))]
    named += [(f"{a}<->{b}", swapped_order(rule_set, a, b)) for a, b in swaps]
    named_hits = order_correct_counts(masks, gold, np.asarray([o for _, o in named]), k)
    results = [
        OrderAccuracy(name, tuple(labels[j] for j in order), prop(hits, n))
        for (name, order), hits in zip(named, named_hits.tolist(), strict=True)
    ]
    low = mean = high = percentile = None
    if orders:
        hits = order_correct_counts(masks, gold, random_orders(k, orders, seed), k)
        low, mean, high = float(hits.min() / n), float(hits.mean() / n), float(hits.max() / n)
        percentile = float(100.0 * (hits <= named_hits[0]).mean())
    return Sensitivity(evidence, results[0], tuple(results[1:]), orders, seed, low, mean, high, percentile)


# Text ------------------------------------------------------------------------------------------


def correct_by_id(routed: RoutedItems) -> dict[Any, bool]:
    """Per item id: whether the pass routed it to its reference label (an abstention is not right);
    two passes are paired on these (nsmcore.evaluation_tables.four_cell)."""
    if not routed.ids or any(i is None for i in routed.ids):
        raise ValueError("pairing two passes needs an id on every item")
    right = (routed.types == ROUTED) & (routed.winners == routed.gold)
    return dict(zip(routed.ids, right.tolist(), strict=True))
