"""Does fine-tuning the encoder pay (issue 23)? The best classifier parser of bench_parser with
all-MiniLM-L6-v2 fine-tuned on CPU per fold, against the same parser with the frozen encoder.

Protocol: bench_parser's, unchanged (docs/training.md, "Evaluation protocol"): 5-fold
cross-validation over silver-156 (stratified by prompted emotion, seed 0), pass A as gold, each
fold's items held out by text_id and by text from every training source (bench_parser's
fold_training); label supervision from every allowed crowd-enVent text (``hidden_emo_text``, the
prompted emotion).

Per fold, before the classifier trains, a copy of the bundled all-MiniLM-L6-v2 is fine-tuned on
that fold's training data only: mean pooling over the attention mask (L2-normalised, as
nsmcore.encoder reads it), then 12 linear slot heads (cross-entropy on the training folds' pass A
explications, about 125 items) and one linear label head over the emotions (cross-entropy on a
seeded sample of the fold's allowed crowd texts, label = prompted emotion). One epoch over the
sample, with several passes over the gold items interleaved evenly; the slot loss is weighted so
the gold items weigh as much in total as the crowd texts (FINETUNE holds the sizes, epochs and
learning rates). The held-out items are asserted absent from the fine-tuning data. The encoder
(model and tokenizer) is saved to a temporary folder, deleted afterwards, and the classifier is
trained and scored exactly as bench_parser's "labels-tfidf+emb-joint-trust0.5-prior4-autobelow"
with options["encoder"] = that folder: bench_parser's own run_config does the training, scoring
and figures (its fold_training is wrapped, for the run, to fine-tune the fold's encoder first).

Figures (results/finetune.json, as bench_parser writes them): per-slot accuracy and mean per-slot
alpha against pass A and B, routed accuracy, abstention and selective accuracy with exact 95%
intervals, per-slot accuracy by slot, classifier training seconds per fold, prefill throughput of
the last fold's model, the label baseline on the same texts; besides them the fine-tuning seconds
per fold, and beside each figure the frozen encoder's value from results/parser.json where there
is one. The question's bar: per-slot accuracy against pass A >= 0.78 with routed accuracy >= 0.36
and selective accuracy >= 0.45.

    python -m benchmarks.bench_finetune [--quick]

``--quick`` fine-tunes the first fold's encoder only, with a small sample, and prints the time it
took and what the full run would take; it writes nothing. Torch runs on one thread. Without
``../shared/data`` the benchmark says so and writes nothing; the data is never copied.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import bench_parser
from benchmarks.bench_parser import _norm, crowd_rows
from benchmarks.bench_training import CROWD, FOLDS, SEED, SILVER, load_silver
from benchmarks.common import RESULTS, figure

BEST = "labels-tfidf+emb-joint-trust0.5-prior4-autobelow"
NAME = "labels-tfidf+finetuned-emb-joint-trust0.5-prior4-autobelow"

#: the fine-tuning of each fold's encoder (chosen before any held-out figure was seen)
FINETUNE: dict[str, Any] = {
    "base": "all-MiniLM-L6-v2 (bundled)",
    "max_tokens": 64,
    "batch": 16,
    "crowd_texts": 1000,  # a seeded sample of the fold's allowed crowd texts, one epoch (sized by --quick)
    "crowd_epochs": 1,
    "gold_passes": 4,  # passes over the fold's ~125 pass A explications, interleaved
    "lr_encoder": 3e-5,
    "lr_heads": 1e-3,
    "weight_decay": 0.01,
    "warmup_share": 0.1,  # linear warm-up, then linear decay to 0
    "head_scale": 20.0,  # the heads read the L2-normalised embedding times this
    "slot_loss_weight": "crowd batches / gold batches",  # gold and crowd weigh the same in total
    "grad_clip": 1.0,
    "seed": SEED,
    "torch_threads": 1,
}
QUICK_CROWD = 200

#: the issue's bar for "it pays"
BAR = {"per-slot accuracy against pass A": 0.78, "routed accuracy": 0.36, "selective accuracy": 0.45}


def fine_tune(
    items: Sequence[dict[str, Any]],
    gold: Sequence[dict[str, str]],
    train: Sequence[int],
    test: Sequence[int],
    crowd: Sequence[dict[str, str]],
    folder: Path,
    settings: dict[str, Any],
) -> dict[str, Any]:
    """Fine-tune a copy of the bundled encoder on the fold's training items (slot heads) and a
    seeded sample of its allowed crowd texts (label head); save model and tokenizer to
    ``folder``. Returns what was done (sizes, steps, seconds, last losses)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from nsmcore.encoder import resolve
    from nsmcore.schema import SLOTS

    started = time.perf_counter()
    sample = random.Random(SEED).sample(list(crowd), min(settings["crowd_texts"], len(crowd)))
    # nothing held out reaches fine-tuning: not by id, not by (normalised) text
    held_ids = {str(items[i]["text_id"]) for i in test}
    held_texts = {_norm(items[i]["text"]) for i in test}
    assert not set(train) & set(test), "a held-out item among the training items"
    for i in train:
        assert str(items[i]["text_id"]) not in held_ids and _norm(items[i]["text"]) not in held_texts
    for r in sample:
        assert r["text_id"] not in held_ids, f"held-out text_id {r['text_id']} in the fine-tuning sample"
        assert _norm(r["hidden_emo_text"]) not in held_texts and _norm(r["generated_text"]) not in held_texts

    torch.manual_seed(SEED)
    source = resolve("bundled")
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModel.from_pretrained(source)
    dim = int(model.config.hidden_size)
    emotions = sorted({r["emotion"] for r in sample})
    slot_heads = torch.nn.ModuleList(torch.nn.Linear(dim, len(s.values)) for s in SLOTS)
    label_head = torch.nn.Linear(dim, len(emotions))

    rng = random.Random(SEED)
    batch = settings["batch"]
    order = list(sample)
    rng.shuffle(order)
    crowd_batches = [order[k : k + batch] for k in range(0, len(order), batch)] * settings["crowd_epochs"]
    gold_batches = []
    for _ in range(settings["gold_passes"]):
        ids = list(train)
        rng.shuffle(ids)
        gold_batches += [ids[k : k + batch] for k in range(0, len(ids), batch)]
    # the gold batches spread evenly among the crowd batches
    placed = [((k + 0.5) / len(crowd_batches), "crowd", b) for k, b in enumerate(crowd_batches)]
    placed += [((k + 0.5) / len(gold_batches), "gold", b) for k, b in enumerate(gold_batches)]
    steps = [(kind, b) for _, kind, b in sorted(placed, key=lambda p: (p[0], p[1]))]
    slot_weight = len(crowd_batches) / max(len(gold_batches), 1)

    optimiser = torch.optim.AdamW(
        [
            {
                "params": model.parameters(),
                "lr": settings["lr_encoder"],
                "weight_decay": settings["weight_decay"],
            },
            {"params": [*slot_heads.parameters(), *label_head.parameters()], "lr": settings["lr_heads"]},
        ]
    )
    warmup = max(1, round(settings["warmup_share"] * len(steps)))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: min((step + 1) / warmup, max(0.0, (len(steps) - step) / max(1, len(steps) - warmup))),
    )

    def embed(texts: list[str]) -> Any:
        tokens = tokenizer(
            texts, padding=True, truncation=True, max_length=settings["max_tokens"], return_tensors="pt"
        )
        states = model(**tokens).last_hidden_state
        mask = tokens["attention_mask"].unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return torch.nn.functional.normalize(pooled, dim=1) * settings["head_scale"]

    value_index = [{v: k for k, v in enumerate(s.values)} for s in SLOTS]
    label_index = {e: k for k, e in enumerate(emotions)}
    losses: dict[str, list[float]] = {"crowd": [], "gold": []}
    model.train()
    for kind, chunk in steps:
        if kind == "crowd":
            x = embed([r["hidden_emo_text"] for r in chunk])
            y = torch.tensor([label_index[r["emotion"]] for r in chunk])
            loss = torch.nn.functional.cross_entropy(label_head(x), y)
        else:
            x = embed([items[i]["text"] for i in chunk])
            loss = sum(
                torch.nn.functional.cross_entropy(
                    head(x), torch.tensor([value_index[s][gold[i][slot.name]] for i in chunk])
                )
                for s, (slot, head) in enumerate(zip(SLOTS, slot_heads, strict=True))
            ) / len(SLOTS)
            loss = loss * slot_weight
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(
            [*model.parameters(), *slot_heads.parameters(), *label_head.parameters()], settings["grad_clip"]
        )
        optimiser.step()
        schedule.step()
        losses[kind].append(float(loss.detach()))
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)

    def tail(xs: list[float]) -> float | None:
        last = xs[-max(1, len(xs) // 5) :]
        return round(sum(last) / len(last), 4) if xs else None

    return {
        "seconds": round(time.perf_counter() - started, 1),
        "crowd_texts": len(sample),
        "gold_items": len(train),
        "steps": len(steps),
        "crowd_batches": len(crowd_batches),
        "gold_batches": len(gold_batches),
        "slot_loss_weight": round(slot_weight, 3),
        "emotions": len(emotions),
        # training losses (mean of the last fifth of each kind's steps): a sanity check, not a score
        "last_label_loss": tail(losses["crowd"]),
        "last_slot_loss": tail([v / slot_weight for v in losses["gold"]]),
    }


class FineTuningFolds:
    """bench_parser.fold_training, wrapped: the fold's training data as before, and the fold's
    encoder fine-tuned on it into ``folder`` (the path the configuration's encoder option names),
    the process's loaded copy forgotten so the classifier loads the new one."""

    def __init__(self, gold: Sequence[dict[str, str]], folder: Path, settings: dict[str, Any]):
        self.gold, self.folder, self.settings = gold, folder, settings
        self.original = bench_parser.fold_training
        self.done: list[dict[str, Any]] = []

    def __call__(self, items, train, test, rows):
        from nsmcore.encoder import load_encoder

        train, crowd = self.original(items, train, test, rows)
        shutil.rmtree(self.folder, ignore_errors=True)
        done = fine_tune(items, self.gold, train, test, crowd, self.folder, self.settings)
        load_encoder.cache_clear()
        self.done.append(done)
        print(
            f"  fold {len(self.done)}: fine-tuned in {done['seconds']:.1f} s: {done}",
            file=sys.stderr,
            flush=True,
        )
        return train, crowd


def frozen_figures() -> dict[str, Any]:
    """The frozen encoder's figures of the same configuration (results/parser.json), by metric."""
    path = RESULTS / "parser.json"
    if not path.is_file():
        return {}
    prefix = f"{BEST}: "
    return {
        f["name"][len(prefix) :]: f["value"]
        for f in json.loads(path.read_text()).get("figures", [])
        if f["name"].startswith(prefix)
    }


def data() -> tuple[list[dict], list[dict], list[dict], list[dict], list]:
    """silver-156's items, pass A and pass B explications, the crowd rows and bench_parser's folds."""
    from sklearn.model_selection import StratifiedKFold

    items, by_id_a, by_id_b = load_silver()
    gold = [by_id_a[i["text_id"]] for i in items]
    pass_b = [by_id_b[i["text_id"]] for i in items]
    folds = list(
        StratifiedKFold(FOLDS, shuffle=True, random_state=SEED).split(items, [i["emotion"] for i in items])
    )
    return items, gold, pass_b, crowd_rows(), folds


def quick() -> int:
    """Fine-tune the first fold's encoder on a small sample and project the full run's time."""
    items, gold, _, rows, folds = data()
    train, test = folds[0]
    train, crowd = bench_parser.fold_training(items, train, test, rows)
    settings = {**FINETUNE, "crowd_texts": QUICK_CROWD}
    with tempfile.TemporaryDirectory() as tmp:
        done = fine_tune(items, gold, train, test, crowd, Path(tmp) / "encoder", settings)
    per_text = done["seconds"] / (done["crowd_texts"] + done["gold_items"] * settings["gold_passes"])
    full = per_text * (FINETUNE["crowd_texts"] + done["gold_items"] * FINETUNE["gold_passes"])
    print(json.dumps(done))
    print(
        f"fine-tuning: {per_text * 1000:.0f} ms per text; with {FINETUNE['crowd_texts']} crowd texts and "
        f"{FINETUNE['gold_passes']} gold passes about {full:.0f} s per fold, {FOLDS * full / 60:.1f} min for "
        f"{FOLDS} folds (plus encoding every allowed crowd text again and training the classifier per fold)"
    )
    return 0


def run() -> list[dict]:
    from nsmcore.baselines import APPRAISALS

    items, gold, pass_b, rows, folds = data()
    bench_parser.APPRAISAL_KEYS = APPRAISALS  # as bench_parser.run sets it
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "encoder"
        hook = FineTuningFolds(gold, folder, FINETUNE)
        bench_parser.CONFIGS[NAME] = (True, {**bench_parser.CONFIGS[BEST][1], "encoder": str(folder)})
        bench_parser.fold_training = hook
        try:
            figures = bench_parser.run_config(NAME, items, gold, pass_b, rows, folds)
        finally:
            bench_parser.fold_training = hook.original
            del bench_parser.CONFIGS[NAME]
            from nsmcore.encoder import load_encoder

            load_encoder.cache_clear()
    assert len(hook.done) == len(folds), "run_config did not fine-tune once per fold"
    seconds = [d["seconds"] for d in hook.done]
    frozen = frozen_figures()
    for f in figures:
        f["options"] = {
            **f["options"],
            "encoder": "all-MiniLM-L6-v2 fine-tuned per fold (temporary folder, deleted)",
            "fine_tuning": FINETUNE,
        }
        metric = f["name"].split(": ", 1)[1]
        if metric in frozen:
            f["frozen_encoder_value"] = frozen[metric]
        if metric in BAR and f["value"] is not None:
            f["target"] = f">= {BAR[metric]}"
            f["met"] = f["value"] >= BAR[metric]
    notes = {k: figures[0][k] for k in ("items", "cv", "options", "load_average")}
    figures.append(
        figure(
            f"{NAME}: fine-tuning seconds per fold (mean)",
            round(sum(seconds) / len(seconds), 1),
            "s",
            per_fold=hook.done,
            **notes,
        )
    )
    met = [f["met"] for f in figures if "met" in f]
    figures.append(
        figure(
            f"{NAME}: pays (per-slot vs A >= 0.78, routed >= 0.36, selective >= 0.45)",
            len(met) == len(BAR) and all(met),
            "bool",
            **notes,
        )
    )
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    import torch

    from benchmarks.common import write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="time one fold's fine-tuning; write nothing")
    args = parser.parse_args(argv)
    if not (SILVER / "items.jsonl").is_file() or not CROWD.is_dir():
        print("../shared/data not found: no figures written", file=sys.stderr)
        return 0
    torch.set_num_threads(FINETUNE["torch_threads"])
    if args.quick:
        return quick()
    figures = run()
    path = write("finetune", figures)
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
