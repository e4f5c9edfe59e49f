"""The learning queue (issue 27).

1. Ranking: 100,000 items with random per-slot posteriors, round conflict rates and a convention,
   ordered mixed (goal: under 5 s on two cores), and the same items' posteriors read from stored
   raw outputs first (what the queue job does with a round's predictions): each the raw output a
   transformers parser writes (nsmcore.parsers.base.decoded_result: the joint decoding, with the
   per-slot mean log-likelihoods kept beside it), about 4 KB.
2. The simulation: an oracle annotator answers from silver pass A on the real silver-156 items
   (``../shared/data/silver-156``); 20 items to start, batches of 10, the CPU parser trained again
   after each batch; routed accuracy (against the prompted emotion) and mean per-slot accuracy
   (against pass A) on the held-out third, for random, informative and mixed, 5 seeds. Goal:
   informative or mixed reaches random's final routed accuracy with at most 60% of the items (or
   the figure says by how much it misses). The chart goes to docs/figures/learning-queue.svg.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks.common import figure

ROOT = Path(__file__).resolve().parent.parent
SILVER = ROOT.parent / "shared" / "data" / "silver-156"
SVG = ROOT / "docs" / "figures" / "learning-queue.svg"
SEEDS = 5
N_RANK = 100_000


def ranking() -> list[dict]:
    import numpy as np

    from nsmcore.decoding import decode, normalise, rule_lattice
    from nsmcore.parsers.base import decoded_result
    from nsmcore.queue import posteriors_of, posteriors_to_log, rank_items
    from nsmcore.schema import SLOTS

    lattice = rule_lattice()
    rng = np.random.default_rng(0)
    logp = normalise([rng.normal(size=(N_RANK, len(s.values))) * 2 for s in SLOTS])
    labels = rng.choice([*lattice.labels, "abstain"], N_RANK).tolist()
    rates = [rng.uniform(0, 0.4, len(s.values)) for s in SLOTS]
    conventions = [("agency", "i", "other")]
    ids = list(range(N_RANK))
    rank_items(ids[:100], [a[:100] for a in logp], labels[:100], lattice=lattice)  # the lattice's one-off
    start = time.perf_counter()
    rank_items(
        ids, logp, labels, order="mixed", seed=1, rates=rates, conventions=conventions, lattice=lattice
    )
    ranked = time.perf_counter() - start
    decoded = decode(logp, lattice=lattice)
    raw = [
        decoded_result(
            d,
            0.1,
            mean_logprob={
                s.name: dict(zip(s.values, logp[k][i].round(4).tolist(), strict=True))
                for k, s in enumerate(SLOTS)
            },
        ).raw_output
        for i, d in enumerate(decoded)
    ]
    start = time.perf_counter()
    logp_read = posteriors_to_log([posteriors_of(r) for r in raw])
    rank_items(
        ids, logp_read, labels, order="mixed", seed=1, rates=rates, conventions=conventions, lattice=lattice
    )
    with_reading = time.perf_counter() - start
    return [
        figure(
            f"rank {N_RANK:,} items (mixed, conflict rates, a convention)",
            round(ranked, 2),
            "s",
            "< 5 s",
            ranked < 5,
        ),
        figure(
            f"read {N_RANK:,} stored posteriors and rank them",
            round(with_reading, 2),
            "s",
            "< 5 s",
            with_reading < 5,
        ),
    ]


def simulation() -> list[dict]:
    from nsmcore.queue import INFORMATIVE, MIXED, RANDOM
    from nsmcore.queue_simulation import Example, curve_svg, simulate, summarise
    from nsmcore.schema import SLOT_NAMES

    if not SILVER.is_dir():
        print(f"  no silver-156 at {SILVER}: the simulation is not measured")
        return []
    items = [json.loads(line) for line in (SILVER / "items.jsonl").open(encoding="utf-8") if line.strip()]
    rows = [json.loads(line) for line in (SILVER / "pass-a.jsonl").open(encoding="utf-8") if line.strip()]
    oracle = {r["text_id"]: {s: r[s] for s in SLOT_NAMES} for r in rows}
    examples = [Example(i["text_id"], i["text"], oracle[i["text_id"]], i["emotion"]) for i in items]
    start = time.perf_counter()
    runs = {
        order: [simulate(examples, order=order, seed=seed) for seed in range(SEEDS)]
        for order in (RANDOM, INFORMATIVE, MIXED)
    }
    seconds = time.perf_counter() - start
    summary = summarise(runs)
    SVG.parent.mkdir(parents=True, exist_ok=True)
    SVG.write_text(
        curve_svg(
            summary, f"silver-156, oracle pass A, {SEEDS} seeds: mean and band (lowest to highest seed)"
        ),
        encoding="utf-8",
    )
    target = summary["target"]
    out = [
        figure(
            "simulation: random's final routed accuracy (held-out third)",
            target["routed"],
            "share",
            per_slot=target["per_slot"],
            labelled=target["labelled"],
            seeds=SEEDS,
            seconds=round(seconds, 1),
            curves=summary["curves"],
            chart=str(SVG.relative_to(ROOT)),
        )
    ]
    for measure, key in (("routed", "reach"), ("per_slot", "reach_per_slot")):
        for order in (INFORMATIVE, MIXED):
            reach = summary[key][order]
            share = reach["share_of_items"]
            out.append(
                figure(
                    f"simulation: share of the items {order} needs for random's final {measure} accuracy",
                    share if share is not None else 1.0,
                    "share",
                    "<= 0.6",
                    share is not None and share <= 0.6,
                    labelled=reach["labelled"],
                    final_shortfall=reach["final_shortfall"],
                    band_there=reach["band"],
                    random_band_at_end=summary["random_band"][measure],
                )
            )
    return out


def run(quick: bool = False) -> list[dict]:
    return ranking() + ([] if quick else simulation())
