"""The learning queue's order (issue 27): which item an annotator should label next.

A round serves its items in one of three orders:

- ``random``: a seeded random permutation. Every item is in the random share, with importance
  weight 1: any figure over the labelled items estimates the round's without bias.
- ``informative``: the items that teach most first. An item's *score* is

      score = change x (1 + conflict) x (1 + rejected)

  where ``change`` is the probability that its routed label differs from the one the parser's
  explication routes to, when each slot's value is drawn from the parser's per-slot posterior
  (exact over the rule lattice, :func:`nsmcore.decoding.label_mass`; only slots the rules read
  can move a label, so a confident slot nobody reads adds nothing); ``conflict`` the expected
  share of slots on which annotators will disagree, from the round's answers so far (each slot
  value's observed disagreement rate, shrunk towards the slot's) and its conventions (a slot whose
  posterior splits between a convention's two values); ``rejected`` the share of the item's
  rendered lines the NLI verifier rejected. Ties (scores equal to three decimals) are broken for
  diversity: round-robin over the labels the parser routes them to.
- ``mixed``: a seeded random share (default 20%) spread evenly through the informative order. The
  random share is a simple random sample of the round's items, each carrying the importance weight
  N/m (N items, m in the share); the informative picks carry 0. Corpus statistics that must be
  unbiased (agreement, the evaluation suite) are computed on the random share alone.

Everything here is plain arrays: ranking 100,000 items takes about two seconds on two cores
(benchmarks/bench_queue.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from nsmcore.decoding import RuleLattice, label_mass, normalise, rule_lattice
from nsmcore.queue_orders import DEFAULT_RANDOM_SHARE, INFORMATIVE, MIXED, ORDERS, RANDOM
from nsmcore.schema import SLOTS

TIE_DECIMALS = 3
#: how many answers a slot value's own disagreement rate counts as, against its slot's rate
SHRINKAGE = 2.0


class QueueError(ValueError):
    """Bad input to the queue: the message names it."""


@dataclass(frozen=True)
class Ranked:
    """One item's place in the queue and why."""

    id: Any
    rank: int  # 0: served first
    score: float
    change: float
    conflict: float
    rejected: float
    label: str  # the label the parser's explication routes to
    random: bool  # in the seeded random share
    weight: float  # importance weight: N/m in the random share, 0 for an informative pick

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "rank": self.rank, "score": round(self.score, 6), "change": round(self.change, 6),
            "conflict": round(self.conflict, 6), "rejected": round(self.rejected, 6), "label": self.label,
            "random": self.random, "weight": round(self.weight, 6),
        }  # fmt: skip


def check_order(order: str, share: float) -> float:
    """The random share an order uses (random: all, informative: none, mixed: ``share``)."""
    if order not in ORDERS:
        raise QueueError(f"order {order!r}: expected one of {', '.join(ORDERS)}")
    if order == RANDOM:
        return 1.0
    if order == INFORMATIVE:
        return 0.0
    if not 0.0 < share < 1.0:
        raise QueueError(f"random share {share!r}: a mixed order needs a share between 0 and 1 (exclusive)")
    return float(share)


# A joint decoding's raw output as nsmcore.parsers.base.decoded_result writes it: compact JSON
# whose keys before "posteriors" are the decoding's own (a label, numbers, the label masses). A key
# can only match outside a string (a quote inside one is escaped), and among those keys only the
# top-level "posteriors" holds an object, so its value is read alone: the rest of the output (the
# values, a backend's scores kept beside them) is never parsed. On the benchmark's 100,000 raw
# outputs of a transformers parser (2.5 KB each), 3.3 to 3.5 s against 6.8 to 7.7 s with json.loads.
_JOINT = '{"decoding":"joint",'
_POSTERIORS = '"posteriors":'
_DECODER = json.JSONDecoder()


def posteriors_of(raw_output: str) -> dict[str, dict[str, float]] | None:
    """The per-slot posteriors a parser wrote in its raw output (a joint decoding's ``posteriors``,
    nsmcore.parsers.base.decoded_result), or None when it wrote none or the output is not JSON."""
    if not raw_output or not raw_output.startswith("{"):
        return None
    if raw_output.startswith(_JOINT):
        at = raw_output.find(_POSTERIORS)
        while at != -1:
            try:
                value, _ = _DECODER.raw_decode(raw_output, at + len(_POSTERIORS))
            except ValueError:
                return None
            if isinstance(value, dict):
                return value
            at = raw_output.find(_POSTERIORS, at + 1)
        return None
    try:
        posteriors = json.loads(raw_output).get("posteriors")
    except (ValueError, AttributeError):
        return None
    return posteriors if isinstance(posteriors, dict) else None


def posteriors_to_log(rows: Sequence[Mapping[str, Mapping[str, float]] | None]) -> list[np.ndarray]:
    """Per-slot (n, values) log-probabilities from per-item ``{slot: {value: p}}`` posteriors; an
    item with none (None, or a slot missing or all zero) is as uncertain as can be on that slot
    (uniform). One pass over the items puts every slot's numbers in one flat run, read into one
    array and cut into slots: a list of lists per slot took 2.8 times as long, and one pass over
    the items per slot 1.8 times (on the benchmark's 100,000 items, benchmarks/bench_queue.py)."""
    n = len(rows)
    slots = [(slot.name, tuple(slot.values), (0.0,) * len(slot.values)) for slot in SLOTS]
    none = tuple(chain.from_iterable(empty for _, _, empty in slots))
    flat: list[float] = []
    add = flat.extend
    for row in rows:
        if not row:
            add(none)
            continue
        for name, values, empty in slots:
            p = row.get(name)
            # a parser writes each slot's values in the schema's order: take them whole when so
            if not p:
                add(empty)
            elif tuple(p) == values:
                add(p.values())
            else:
                add([p.get(v, 0.0) for v in values])
    table = np.array(flat, dtype=np.float64).reshape(n, len(none))
    out = []
    start = 0
    for _, values, _ in slots:
        k = len(values)
        a = np.clip(table[:, start : start + k], 0.0, None)
        start += k
        total = a.sum(axis=1, keepdims=True)
        a = np.where(total > 0, a / np.where(total > 0, total, 1.0), 1.0 / k)
        with np.errstate(divide="ignore"):
            out.append(np.log(a))
    return out


def conflict_rates(answers: Sequence[Sequence[Mapping[str, str]]]) -> list[np.ndarray]:
    """Per slot, each value's disagreement rate: of the items answered twice or more where some
    answer chose the value, the share whose answers disagree on the slot, shrunk towards the
    slot's own rate by SHRINKAGE answers (a value seen once says little). A slot never answered
    twice has rate 0 for every value."""
    rates = []
    for slot in SLOTS:
        index = {v: k for k, v in enumerate(slot.values)}
        seen = np.zeros(len(slot.values))
        split = np.zeros(len(slot.values))
        items = disagreed = 0
        for item in answers:
            chosen = {index[a[slot.name]] for a in item if a.get(slot.name) in index}
            if len(item) < 2 or not chosen:
                continue
            items += 1
            differ = len(chosen) > 1
            disagreed += differ
            for k in chosen:
                seen[k] += 1
                split[k] += differ
        base = disagreed / items if items else 0.0
        rates.append((split + SHRINKAGE * base) / (seen + SHRINKAGE))
    return rates


def expected_conflict(
    logp: Sequence[np.ndarray],
    rates: Sequence[np.ndarray] | None = None,
    conventions: Sequence[tuple[str, str, str]] = (),
) -> np.ndarray:
    """Per item, the expected share of slots annotators will disagree on: per slot the larger of
    the value rates weighted by the posterior and, for each convention (slot, value_a, value_b),
    ``4 p(a) p(b)`` (1 when the posterior splits evenly between the two), averaged over slots."""
    probs = [np.exp(a) for a in normalise(logp)]
    n = probs[0].shape[0]
    per_slot = np.zeros((n, len(SLOTS)))
    if rates is not None:
        for s, (p, r) in enumerate(zip(probs, rates, strict=True)):
            per_slot[:, s] = p @ r
    for slot_name, a, b in conventions:
        s = next((k for k, slot in enumerate(SLOTS) if slot.name == slot_name), None)
        if s is None or a not in SLOTS[s].values or b not in SLOTS[s].values:
            continue  # a convention on a slot or value this schema does not have
        pa, pb = probs[s][:, SLOTS[s].values.index(a)], probs[s][:, SLOTS[s].values.index(b)]
        per_slot[:, s] = np.maximum(per_slot[:, s], 4.0 * pa * pb)
    return np.clip(per_slot.mean(axis=1), 0.0, 1.0)


def random_share(n: int, share: float, seed: int) -> np.ndarray:
    """Which of ``n`` items are in the seeded random share (a simple random sample of
    round(share x n) items, at least one when the share is above 0)."""
    if n == 0 or share <= 0:
        return np.zeros(n, dtype=bool)
    m = n if share >= 1 else min(n, max(1, round(share * n)))
    mask = np.zeros(n, dtype=bool)
    mask[np.random.default_rng(seed).choice(n, size=m, replace=False)] = True
    return mask


def _diverse(indices: list[int], scores: np.ndarray, labels: Sequence[str]) -> list[int]:
    """``indices`` by score, highest first; within a tie, round-robin over labels (each label's
    items in their first order), so a tie does not serve one label's items in a row."""
    rounded = np.round(scores, TIE_DECIMALS)
    ordered = sorted(indices, key=lambda i: (-rounded[i], i))
    out: list[int] = []
    start = 0
    while start < len(ordered):
        end = start
        while end < len(ordered) and rounded[ordered[end]] == rounded[ordered[start]]:
            end += 1
        buckets: dict[str, list[int]] = {}
        for i in ordered[start:end]:
            buckets.setdefault(labels[i], []).append(i)
        queues = list(buckets.values())
        depth = 0
        while len(out) < end:
            for bucket in queues:
                if depth < len(bucket):
                    out.append(bucket[depth])
            depth += 1
        start = end
    return out


def interleave(informative: list[int], randoms: list[int]) -> list[int]:
    """The random picks spread evenly through the informative order: of the first k places,
    floor(k m / n) go to the random share (n places, m random)."""
    n, m = len(informative) + len(randoms), len(randoms)
    out: list[int] = []
    a = b = 0
    for k in range(n):
        if b < m and (k + 1) * m // n > b:
            out.append(randoms[b])
            b += 1
        else:
            out.append(informative[a])
            a += 1
    return out


def rank_items(
    ids: Sequence[Any],
    logp: Sequence[np.ndarray],
    labels: Sequence[str],
    *,
    order: str = MIXED,
    share: float = DEFAULT_RANDOM_SHARE,
    seed: int = 0,
    rates: Sequence[np.ndarray] | None = None,
    conventions: Sequence[tuple[str, str, str]] = (),
    rejected: Sequence[float] | None = None,
    lattice: RuleLattice | None = None,
) -> list[Ranked]:
    """The queue of ``ids`` in the given order, each with its score and its parts (see the module
    docstring). ``logp``: per slot, (n, values) log-probabilities (the parser's posteriors);
    ``labels``: the label each item's parser explication routes to; ``rejected``: per item, the
    share of its lines the verifier rejected (0 where unverified)."""
    share = check_order(order, share)
    n = len(ids)
    if len(labels) != n:
        raise QueueError(f"{n} items but {len(labels)} labels")
    if rejected is not None and len(rejected) != n:
        raise QueueError(f"{n} items but {len(rejected)} verifier shares")
    if n == 0:
        return []
    lattice = lattice or rule_lattice()
    change = 1.0 - label_mass(lattice, logp, labels)
    conflict = expected_conflict(logp, rates, conventions)
    refused = np.clip(np.asarray(rejected if rejected is not None else np.zeros(n), dtype=float), 0.0, 1.0)
    scores = change * (1.0 + conflict) * (1.0 + refused)
    in_share = random_share(n, share, seed)
    m = int(in_share.sum())
    randoms = [int(i) for i in np.random.default_rng(seed + 1).permutation(np.flatnonzero(in_share))]
    informative = _diverse([int(i) for i in np.flatnonzero(~in_share)], scores, labels)
    served = interleave(informative, randoms)
    weight = n / m if m else 0.0
    return [
        Ranked(
            id=ids[i],
            rank=rank,
            score=float(scores[i]),
            change=float(change[i]),
            conflict=float(conflict[i]),
            rejected=float(refused[i]),
            label=str(labels[i]),
            random=bool(in_share[i]),
            weight=weight if in_share[i] else 0.0,
        )
        for rank, i in enumerate(served)
    ]
