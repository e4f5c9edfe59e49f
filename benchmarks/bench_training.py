"""The classifier parser against the lexical parser and the paper's baselines (issue 16).

Item set: the real silver-156 items (``../shared/data/silver-156``: masked crowd-enVent texts,
12 per prompted emotion), with silver pass A as gold explications and the prompted emotion as the
reference label. 5-fold cross-validation, stratified by emotion, seed 0: every item is predicted
once by a model that did not see it.

- Per-slot accuracy against pass A: the classifier parser (mean over folds and pooled over the
  156 out-of-fold predictions, with exact 95% intervals), the lexical parser (no training), and
  pass B against pass A (what a second independent annotator reaches: a ceiling, not a model).
- Routed accuracy, abstention and selective accuracy (nsmcore.evaluation, Clopper-Pearson) of the
  classifier parser and the lexical parser, and of pass A itself (the gold explications routed);
  accuracy of the black-box label classifier (TF-IDF + logistic regression on the text) and of
  the appraisal baseline (the 21 crowd-enVent appraisal ratings of the same texts, read from
  ``../shared/data/crowd-enVent/crowd-enVent-test.tsv`` by text_id). Both baselines never abstain.
  Both are also trained once on the crowd-enVent train split (disjoint from the test split the
  silver items come from: 4,320 items) and tested on silver-156: what they reach with about 35x
  the labelled texts of a fold, which the parser cannot use (it needs explications).
- Training time of the classifier parser for 1,000 items: 1,000 crowd-enVent train texts
  (``hidden_emo_text``) with random legal explications (each slot's value drawn uniformly, seed
  0; no silver data). Random targets give every slot every value: the worst case for training.
- Prefill throughput (items/s, batches of 32 as a prefill job reads them) over the same 1,000
  texts: lexical, classifier (the 1,000-item model, loaded from its folder), and transformers on
  the tiny random model of ``python -m nsmcore tiny-model`` (outputs meaningless: it measures
  the machinery, not a real model).

Without ``../shared/data`` the benchmark says so and writes no figures; the data is never copied
into the project.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import figure, timed

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
SILVER = DATA / "silver-156"
CROWD = DATA / "crowd-enVent"
SEED = 0
FOLDS = 5
N_TRAIN_TIME = 1000
BATCH = 32


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def _tsv(name: str) -> list[dict[str, str]]:
    with (CROWD / name).open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))


def load_silver() -> tuple[list[dict[str, Any]], dict[str, dict], dict[str, dict]]:
    from nsmcore.schema import SLOT_NAMES

    items = _jsonl(SILVER / "items.jsonl")

    def slots(path: Path) -> dict[str, dict]:
        return {row["text_id"]: {s: row[s] for s in SLOT_NAMES} for row in _jsonl(path)}

    return items, slots(SILVER / "pass-a.jsonl"), slots(SILVER / "pass-b.jsonl")


def appraisals(rows: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    from nsmcore.baselines import APPRAISALS

    return {row["text_id"]: {name: int(row[name]) for name in APPRAISALS} for row in rows}


def prop_notes(p: Any) -> dict[str, Any]:
    return {"k": p.k, "n": p.n, "ci95": [round(p.low, 4), round(p.high, 4)] if p.n else None}


def slot_figures(label: str, predicted: list[dict], gold: list[dict]) -> list[dict]:
    from nsmcore.evaluation_report import Proportion
    from nsmcore.schema import SLOT_NAMES

    out = []
    for slot in SLOT_NAMES:
        p = Proportion.of(sum(a[slot] == b[slot] for a, b in zip(predicted, gold, strict=True)), len(gold))
        out.append(figure(f"{label}: {slot} accuracy (pooled)", round(p.value, 4), "share", **prop_notes(p)))
    return out


def routed_figures(label: str, explications: list[dict], items: list[dict]) -> list[dict]:
    from nsmcore.evaluation import evaluate, route_items

    routed = route_items(
        {"id": item["text_id"], "explication": e, "reference_label": item["emotion"]}
        for item, e in zip(items, explications, strict=True)
    )
    h = evaluate(routed, tier="S", pass_name=label, orders=0, consistency=False).headline
    return [
        figure(f"{label}: routed accuracy", round(h.accuracy.value, 4), "share", **prop_notes(h.accuracy)),
        figure(
            f"{label}: abstention",
            round(h.abstention.value, 4),
            "share",
            **prop_notes(h.abstention),
            by_type={t: p.k for t, p in h.abstention_by_type.items()},
        ),
        figure(
            f"{label}: selective accuracy",
            round(h.selective_accuracy.value, 4) if h.selective_accuracy.value is not None else 0.0,
            "share",
            **prop_notes(h.selective_accuracy),
        ),
    ]


def label_figure(label: str, predicted: list[str], items: list[dict], **notes: Any) -> dict:
    from nsmcore.evaluation_report import Proportion

    p = Proportion.of(sum(a == i["emotion"] for a, i in zip(predicted, items, strict=True)), len(items))
    return figure(f"{label}: accuracy (never abstains)", round(p.value, 4), "share", **prop_notes(p), **notes)


def cross_validate(items, gold, ratings) -> tuple[list[dict], dict[str, Any]]:
    """Out-of-fold predictions of the classifier parser and both baselines, and per-fold figures."""
    from sklearn.model_selection import StratifiedKFold

    from nsmcore.baselines import train_appraisal_baseline, train_label_classifier
    from nsmcore.parsers import make_parser
    from nsmcore.parsers.classifier_training import train_classifier
    from nsmcore.schema import SLOT_NAMES

    n = len(items)
    texts = [i["text"] for i in items]
    labels = [i["emotion"] for i in items]
    slots = [gold[i["text_id"]] for i in items]
    item_ratings = [ratings[i["text_id"]] for i in items]
    parsed: list[dict | None] = [None] * n
    label_pred: list[str] = [""] * n
    appraisal_pred: list[str] = [""] * n
    fold_slot_acc: dict[str, list[float]] = {s: [] for s in SLOT_NAMES}
    train_seconds = []
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=SEED).split(texts, labels)
    with tempfile.TemporaryDirectory() as tmp:
        for k, (train, test) in enumerate(folds):
            start = time.perf_counter()
            model = train_classifier([(texts[j], slots[j]) for j in train], seed=SEED)
            train_seconds.append(time.perf_counter() - start)
            folder = model.save(Path(tmp) / f"fold-{k}", meta={"fold": k})
            results = make_parser("classifier", model=str(folder)).parse([texts[j] for j in test])
            assert all(r.legal for r in results)
            for j, r in zip(test, results, strict=True):
                parsed[j] = r.explication.as_dict()
            for s in SLOT_NAMES:
                fold_slot_acc[s].append(statistics.mean(parsed[j][s] == slots[j][s] for j in test))
            clf = train_label_classifier([texts[j] for j in train], [labels[j] for j in train], SEED)
            for j, p in zip(test, clf.predict([texts[j] for j in test]), strict=True):
                label_pred[j] = p
            app = train_appraisal_baseline([item_ratings[j] for j in train], [labels[j] for j in train], SEED)
            for j, p in zip(test, app.predict([item_ratings[j] for j in test]), strict=True):
                appraisal_pred[j] = p
    return parsed, {
        "fold_slot_acc": fold_slot_acc,
        "train_seconds": train_seconds,
        "label_pred": label_pred,
        "appraisal_pred": appraisal_pred,
    }


def random_explications(n: int, seed: int) -> list[dict[str, str]]:
    from nsmcore.legality import is_legal
    from nsmcore.schema import SLOTS

    rng = random.Random(seed)
    out = []
    while len(out) < n:
        slots = {slot.name: rng.choice(slot.values) for slot in SLOTS}
        if is_legal(slots):
            out.append(slots)
    return out


def bench_speed(train_rows: list[dict[str, str]], quick: bool) -> list[dict]:
    from nsmcore.parsers import make_parser
    from nsmcore.parsers.classifier_training import train_classifier

    texts = [row["hidden_emo_text"] for row in train_rows[:N_TRAIN_TIME]]
    examples = list(zip(texts, random_explications(len(texts), SEED), strict=True))
    seconds, model = timed(lambda: train_classifier(examples, seed=SEED), repeat=1 if quick else 3)
    figures = [
        figure(
            f"classifier parser: training on {len(texts):,} items",
            round(seconds, 2),
            "s",
            target="< 30 s",
            met=seconds < 30,
            data="crowd-enVent train texts with random legal explications (seed 0), one process",
        )
    ]

    def throughput(parser: Any, sample: list[str], label: str, **notes: Any) -> dict:
        def parse_all() -> int:
            legal = 0
            for start in range(0, len(sample), BATCH):
                legal += sum(r.legal for r in parser.parse(sample[start : start + BATCH]))
            return legal

        secs, legal = timed(parse_all, repeat=1 if quick else 3)
        return figure(
            f"prefill throughput: {label} ({len(sample):,} texts)",
            round(len(sample) / secs, 1),
            "items/s",
            legal_share=round(legal / len(sample), 4),
            **notes,
        )

    with tempfile.TemporaryDirectory() as tmp:
        folder = model.save(Path(tmp) / "model")
        figures.append(throughput(make_parser("lexical"), texts, "lexical"))
        figures.append(throughput(make_parser("classifier", model=str(folder)), texts, "classifier"))
        from nsmcore.tiny import build_tiny_causal_lm

        tiny = build_tiny_causal_lm(Path(tmp) / "tiny", seed=0)
        parser = make_parser("transformers", model=str(tiny), device="cpu", batch_size=16)
        figures.append(
            throughput(
                parser,
                texts[: 16 if quick else 32],
                "transformers, tiny random model",
                note="the model of `python -m nsmcore tiny-model` on CPU, 16 texts per batch: outputs "
                "meaningless, machinery cost only; a real model is far slower",
            )
        )
    return figures


def run(quick: bool = False) -> list[dict]:
    if not SILVER.is_dir() or not CROWD.is_dir():
        print(f"  no shared data at {DATA} (silver-156 and crowd-enVent): nothing measured, no figures")
        return []
    from nsmcore.baselines import train_appraisal_baseline, train_label_classifier
    from nsmcore.parsers import make_parser
    from nsmcore.schema import SLOT_NAMES

    items, pass_a, pass_b = load_silver()
    test_rows, train_rows = _tsv("crowd-enVent-test.tsv"), _tsv("crowd-enVent-train.tsv")
    ratings = appraisals(test_rows)
    gold = [pass_a[i["text_id"]] for i in items]
    silver_ids = {i["text_id"] for i in items}
    assert not silver_ids & {r["text_id"] for r in train_rows}, "silver items in the train split"

    parsed, cv = cross_validate(items, pass_a, ratings)
    setting = {"items": "silver-156", "gold": "pass A", "cv": f"{FOLDS}-fold stratified, seed {SEED}"}
    figures = []
    for slot in SLOT_NAMES:
        accs = cv["fold_slot_acc"][slot]
        figures.append(
            figure(
                f"classifier parser: {slot} accuracy (mean over folds)",
                round(statistics.mean(accs), 4),
                "share",
                folds=[round(a, 4) for a in accs],
            )
        )
    figures += slot_figures("classifier parser", parsed, gold)
    lexical = [r.explication.as_dict() for r in make_parser("lexical").parse([i["text"] for i in items])]
    figures += slot_figures("lexical parser", lexical, gold)
    figures += slot_figures("pass B (second silver annotator)", [pass_b[i["text_id"]] for i in items], gold)
    for label, predicted in (("classifier parser", parsed), ("lexical parser", lexical)):
        mean = statistics.mean(
            statistics.mean(p[s] == g[s] for p, g in zip(predicted, gold, strict=True)) for s in SLOT_NAMES
        )
        figures.append(figure(f"{label}: mean per-slot accuracy (pooled)", round(mean, 4), "share"))
    figures += routed_figures("classifier parser", parsed, items)
    figures += routed_figures("lexical parser", lexical, items)
    figures += routed_figures("pass A routed (gold explications)", gold, items)
    figures.append(label_figure("label classifier (text, CV)", cv["label_pred"], items))
    figures.append(label_figure("appraisal baseline (21 ratings, CV)", cv["appraisal_pred"], items))

    texts = [r["hidden_emo_text"] for r in train_rows]
    labels = [r["emotion"] for r in train_rows]
    clf = train_label_classifier(texts, labels, SEED)
    figures.append(
        label_figure(
            "label classifier trained on the crowd-enVent train split",
            clf.predict([i["text"] for i in items]),
            items,
            train_items=len(texts),
        )
    )
    app = train_appraisal_baseline(list(appraisals(train_rows).values()), labels, SEED)
    figures.append(
        label_figure(
            "appraisal baseline trained on the crowd-enVent train split",
            app.predict([ratings[i["text_id"]] for i in items]),
            items,
            train_items=len(texts),
        )
    )
    figures.append(
        figure(
            f"classifier parser: training on one fold ({len(items) - len(items) // FOLDS} items), mean",
            round(statistics.mean(cv["train_seconds"]), 3),
            "s",
        )
    )
    for f in figures:
        f.update(setting)
    figures += bench_speed(train_rows, quick)
    return figures
