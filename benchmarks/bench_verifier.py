"""Verifier speed (issue 7, the part that exists): batched verification against one pair at a
time, on a tiny random NLI model built here (no download), over crowd-enVent texts paired with
rendered lines. Target: batched at least 5x faster. Also the cost of verifying again from the
cache (no forward pass)."""

from __future__ import annotations

import tempfile
import time

from benchmarks.bench_parsers import crowd_texts
from benchmarks.common import figure


class DictCache:
    def __init__(self) -> None:
        self.data: dict = {}

    def get_many(self, keys):
        return {k: self.data[k] for k in keys if k in self.data}

    def set_many(self, scores):
        self.data.update(scores)


def run(quick: bool = False) -> list[dict]:
    from nsmcore.parsers import LexicalParser
    from nsmcore.render import render
    from nsmcore.tiny import build_tiny_nli
    from nsmcore.verifier import Verifier

    corpus, source = crowd_texts()
    texts = corpus[: 40 if quick else 120]
    parser = LexicalParser()
    pairs = [
        (t, line.text)
        for t, r in zip(texts, parser.parse(texts), strict=True)
        for line in render(r.explication)
    ]
    with tempfile.TemporaryDirectory() as folder:
        # the tests' tiny model, its tokenizer's vocabulary learnt from the corpus it reads, so
        # sequences are as long as a real NLI model's (about a token per word), not byte pieces
        build_tiny_nli(folder, texts=corpus, vocab_size=4000)
        # the product's batch (NSM_VERIFIER_BATCH_SIZE, 32)
        batched = Verifier(folder, device="cpu", batch_size=32)
        single = Verifier(folder, device="cpu", batch_size=1)
        batched.score(pairs[:8])
        single.score(pairs[:2])
        start = time.perf_counter()
        batched.score(pairs)
        t_batched = time.perf_counter() - start
        start = time.perf_counter()
        single.score(pairs)
        t_single = time.perf_counter() - start
        cache = DictCache()
        batched.score(pairs, cache=cache)
        start = time.perf_counter()
        batched.score(pairs, cache=cache)
        t_cached = time.perf_counter() - start
    ratio = t_single / t_batched
    tokens = sum(len(batched.tokenizer(p, h)["input_ids"]) for p, h in pairs)
    n = len(pairs)
    return [
        figure(
            f"verifier, tiny NLI, batched (32), {n} pairs", round(n / t_batched, 1), "pairs/s", texts=source
        ),
        figure("verifier, one pair at a time", round(n / t_single, 1), "pairs/s", texts=source),
        figure(
            "verifier batched / one pair at a time",
            round(ratio, 1),
            "x",
            ">= 5x",
            ratio >= 5,
            tokens_per_pair=round(tokens / n, 1),
        ),
        figure("verifying the same pairs again from the cache", round(n / t_cached), "pairs/s"),
    ]
