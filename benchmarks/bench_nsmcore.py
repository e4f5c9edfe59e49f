"""nsmcore speed: regions over the full space, and batch routing throughput.

Targets (issue 2, on the 2-core reference machine): `regions` under 3 s over all 1,866,240
assignments (a plain Python loop takes about 15 s: both reported), and batch routing at
1,000,000 explications per second or more.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import figure, timed
from nsmcore.mapper import encode, load_rule_set, route, route_batch, route_codes
from nsmcore.schema import SLOTS, SPACE_SIZE, from_codes
from nsmcore.space import regions, regions_python

N_BATCH = 1_000_000


def random_codes(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, len(s.values), n, dtype=np.int8) for s in SLOTS], axis=1)


def run(quick: bool = False) -> list[dict]:
    rule_set = load_rule_set()
    figures = []

    seconds, fast = timed(lambda: regions(rule_set), repeat=5)
    figures.append(figure("regions, vectorised (full space)", round(seconds, 4), "s", "< 3 s", seconds < 3))
    if not quick:
        loop_seconds, slow = timed(lambda: regions_python(rule_set), repeat=1, warmup=0)
        if (slow["regions"], slow["abstain"], slow["multi_rule"]) != (
            fast["regions"],
            fast["abstain"],
            fast["multi_rule"],
        ):
            raise AssertionError("the vectorised and plain-loop regions disagree")
        figures.append(figure("regions, plain Python loop (full space)", round(loop_seconds, 2), "s"))
        figures.append(figure("regions speed-up over the loop", round(loop_seconds / seconds, 1), "x"))

    codes = random_codes(N_BATCH)
    seconds, _ = timed(lambda: route_codes(codes, rule_set), repeat=7)
    rate = N_BATCH / seconds
    figures.append(
        figure(
            "batch routing, encoded (1,000,000 explications)",
            round(rate),
            "explications/s",
            ">= 1,000,000/s",
            rate >= 1_000_000,
        )
    )

    explications = [from_codes(row) for row in codes[:100_000].tolist()]
    seconds, _ = timed(lambda: encode(explications), repeat=3)
    figures.append(figure("encoding Explication objects", round(100_000 / seconds), "explications/s"))
    seconds, _ = timed(lambda: route_batch(explications[:20_000], rule_set), repeat=3)
    figures.append(
        figure("route_batch from objects (legality + routing)", round(20_000 / seconds), "explications/s")
    )
    seconds, _ = timed(lambda: [route(e, rule_set) for e in explications[:20_000]], repeat=3)
    figures.append(figure("route() one at a time", round(20_000 / seconds), "explications/s"))
    figures.append(figure("space size", SPACE_SIZE, "assignments"))
    return figures
