"""The evaluation suite's speed (issue 15): the full evaluation of 100,000 routed items, 1,000
random priority orders included, under 2 s on the 2-core reference machine.

The items are legal explications drawn at random from the schema (2% with a residue), with random
reference labels. They are routed once (encoded, vectorised); the timed call is
``evaluate(routed_from_codes(...))``: routing, every figure with its intervals, distributional
scoring (three schemes), 1,000 random orders and a named swap, and causal consistency over every
single-slot edit of each distinct explication. Reported beside it: the same items as plain JSON
objects through ``route_items`` (legality checks, once per distinct explication), and the random
orders decided item by item in Python (each order re-routes every fired set), on a sample.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import figure, timed
from nsmcore.evaluation import evaluate, order_winners, random_orders, route_items, routed_from_codes
from nsmcore.mapper import load_rule_set
from nsmcore.schema import SLOTS, from_codes

N_ITEMS = 100_000
N_ORDERS = 1_000


def random_items(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, len(s.values), n, dtype=np.int8) for s in SLOTS], axis=1)
    gold = rng.integers(0, len(load_rule_set().rules), n)
    residue = rng.random(n) < 0.02
    return codes, gold, residue


def run(quick: bool = False) -> list[dict]:
    rule_set = load_rule_set()
    codes, gold, residue = random_items(N_ITEMS)

    def full() -> object:
        routed = routed_from_codes(codes, gold, rule_set, residue=residue)
        return evaluate(routed, tier="bench", pass_name="random", orders=N_ORDERS, seed=0)

    seconds, report = timed(full, repeat=5)
    figures = [
        figure(
            f"full evaluation, {N_ITEMS:,} routed items, {N_ORDERS:,} random orders",
            round(seconds, 3),
            "s",
            "< 2 s",
            seconds < 2,
            accuracy=report.headline.accuracy.value,
            random_orders_mean=report.sensitivity.random_mean,
            consistency_edits=report.consistency.rate.n,
        )
    ]
    seconds, _ = timed(
        lambda: evaluate(
            routed_from_codes(codes, gold, rule_set, residue=residue),
            tier="bench",
            pass_name="random",
            orders=N_ORDERS,
            consistency=False,
        ),
        repeat=5,
    )
    figures.append(figure("  the same without the single-slot edits", round(seconds, 3), "s"))

    if not quick:
        sample = 20_000
        items = [
            {"reference_label": rule_set.emotions[g], "explication": from_codes(tuple(row)).as_dict()}
            for row, g in zip(codes[:sample].tolist(), gold[:sample].tolist(), strict=True)
        ]
        seconds, _ = timed(lambda: route_items(items, rule_set), repeat=1)
        figures.append(
            figure("route_items from JSON objects (legality checked)", round(sample / seconds), "items/s")
        )
        # Without grouping by fired set: each order decided over all 100,000 masks (still
        # vectorised over items; re-routing each item in Python per order would be far slower).
        routed = routed_from_codes(codes, gold, rule_set, residue=residue)
        orders = random_orders(len(rule_set.rules), 50, 0)
        start = time.perf_counter()
        for order in orders:
            order_winners(routed.masks, order)
        per_order = (time.perf_counter() - start) / len(orders)
        figures.append(
            figure(
                "orders decided over every item, not per fired set (scaled to 1,000)",
                round(per_order * N_ORDERS, 2),
                "s",
            )
        )
    return figures
