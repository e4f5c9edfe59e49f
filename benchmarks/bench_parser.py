"""How good a parser this machine can train (issue 23): the classifier parser on held-out
silver-156, by supervision source, text features and decoding.

Protocol (docs/training.md, "Evaluation protocol"):

- 5-fold cross-validation over silver-156 (stratified by prompted emotion, seed 0). Silver pass A
  is gold; each fold's items are held out *by text_id and by text* from every training source.
- Slot supervision: the other folds' pass A explications. Label supervision (through the rules):
  every crowd-enVent text (train, val and test splits, ``hidden_emo_text``) whose id and text are
  not held out, with its prompted emotion and, with ``appraisals``, its 21 ratings.
- Figures per configuration: per-slot accuracy and mean per-slot Krippendorff's alpha against pass
  A and pass B (pooled over the 156 out-of-fold predictions; alpha as nsmcore.agreement computes
  it, the parser and the pass as two coders, over the slots where it is defined), routed accuracy,
  abstention and selective accuracy against the prompted emotion with exact 95% intervals;
  training seconds per fold; prefill throughput of the last fold's model (batches of 32, on texts
  it has not encoded before).
- The crowd-enVent test split (``--test-split``): the configuration trained on all of silver-156's
  pass A and every train and val text not in silver-156, scored on the test split's texts not in
  silver-156 (routed accuracy, abstention, selective accuracy against the prompted emotion),
  beside the label baseline trained on the same texts.
- Beside them the black-box label baseline (TF-IDF + logistic regression) trained on exactly the
  same texts and labels per fold: what the explication bottleneck costs.

A test (tests/nsmcore/test_parser_protocol.py) checks that no held-out id or text reaches a fold's
training data. Without ``../shared/data`` it says so and writes nothing; the data is never copied.

    python -m benchmarks.bench_parser [--quick] [--configs gold-joint,labels-tfidf,...]
        [--test-split] [--merge]

``--merge`` keeps the figures of configurations not run this time from the results file (each
run is listed under ``runs``), so a long ablation can be measured a few configurations at a time.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

# the same data, folds and seed as the training benchmark's cross-validation
from benchmarks.bench_training import CROWD, FOLDS, ROOT, SEED, SILVER, _jsonl
from benchmarks.common import figure

#: name -> (use labelled crowd texts, classifier options)
CONFIGS: dict[str, tuple[bool, dict[str, Any]]] = {
    "gold-argmax": (False, {"decoding": "argmax"}),
    "gold-joint": (False, {"decoding": "joint"}),
    "labels-tfidf-joint": (True, {"decoding": "joint"}),
    "labels-tfidf+emb-joint": (True, {"decoding": "joint", "encoder": "bundled"}),
    "labels-tfidf+emb-joint-trust0.5": (
        True,
        {"decoding": "joint", "encoder": "bundled", "label_trust": 0.5},
    ),
    "labels-tfidf+emb-joint-trust0.75": (
        True,
        {"decoding": "joint", "encoder": "bundled", "label_trust": 0.75},
    ),
    "labels-tfidf+emb-joint-weight0.1": (
        True,
        {"decoding": "joint", "encoder": "bundled", "label_weight": 0.1},
    ),
    "labels-tfidf-joint-autogap": (True, {"decoding": "joint", "abstain_gap": "auto"}),
    "labels-tfidf+emb-joint-autogap": (
        True,
        {"decoding": "joint", "encoder": "bundled", "abstain_gap": "auto"},
    ),
    "labels+appraisals-tfidf+emb-joint": (
        True,
        {"decoding": "joint", "encoder": "bundled", "appraisal_weight": 1.0},
    ),
    # the label head (option label_prior): slots kept near gold (trust 0.5), the head chooses the rule
    "labels-tfidf-joint-trust0.5-prior4-autobelow": (
        True,
        {"decoding": "joint", "label_trust": 0.5, "label_prior": 4.0, "abstain_below": "auto"},
    ),
    "labels-tfidf+emb-joint-trust0.5-prior1": (
        True,
        {"decoding": "joint", "encoder": "bundled", "label_trust": 0.5, "label_prior": 1.0},
    ),
    "labels-tfidf+emb-joint-trust0.5-prior2": (
        True,
        {"decoding": "joint", "encoder": "bundled", "label_trust": 0.5, "label_prior": 2.0},
    ),
    "labels-tfidf+emb-joint-trust0.5-prior4": (
        True,
        {"decoding": "joint", "encoder": "bundled", "label_trust": 0.5, "label_prior": 4.0},
    ),
    "labels-tfidf+emb-joint-trust0.5-prior4-autobelow": (
        True,
        {
            "decoding": "joint",
            "encoder": "bundled",
            "label_trust": 0.5,
            "label_prior": 4.0,
            "abstain_below": "auto",
        },
    ),
}


def crowd_rows() -> list[dict[str, str]]:
    """Every crowd-enVent row, each with its ``split`` (train, val or test)."""
    rows: list[dict[str, str]] = []
    for split in ("train", "val", "test"):
        with (CROWD / f"crowd-enVent-{split}.tsv").open(newline="", encoding="utf-8") as stream:
            rows += [{**row, "split": split} for row in csv.DictReader(stream, delimiter="\t")]
    return rows


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def fold_training(
    items: Sequence[dict[str, Any]], train: Sequence[int], test: Sequence[int], rows: Sequence[dict[str, str]]
) -> tuple[list[int], list[dict[str, str]]]:
    """The silver items and crowd rows a fold may train on: nothing whose text_id or (normalised)
    text is one of the fold's held-out items."""
    held_ids = {str(items[i]["text_id"]) for i in test}
    held_texts = {_norm(items[i]["text"]) for i in test}
    crowd = [
        r
        for r in rows
        if r["text_id"] not in held_ids
        and _norm(r["hidden_emo_text"]) not in held_texts
        and _norm(r["generated_text"]) not in held_texts
    ]
    return list(train), crowd


def run_config(name: str, items, gold, pass_b, rows, folds) -> list[dict]:
    from nsmcore.baselines import train_label_classifier
    from nsmcore.evaluation_report import Proportion
    from nsmcore.mapper import route
    from nsmcore.parsers.classifier_training import train_classifier
    from nsmcore.parsers.supervision import LabelledText
    from nsmcore.schema import SLOT_NAMES

    use_labels, options = CONFIGS[name]
    predicted: dict[int, dict[str, str]] = {}
    labels: dict[int, str] = {}
    baseline: dict[int, str] = {}
    seconds = []
    for train, test in folds:
        train, crowd = fold_training(items, train, test, rows)
        labelled = (
            [
                LabelledText(
                    r["hidden_emo_text"], r["emotion"], {k: r[k] for k in APPRAISAL_KEYS}, r["text_id"]
                )
                for r in crowd
            ]
            if use_labels
            else []
        )
        started = time.perf_counter()
        model = train_classifier(
            [(items[i]["text"], gold[i]) for i in train], seed=SEED, labelled=labelled, **options
        )
        seconds.append(time.perf_counter() - started)
        texts = [items[i]["text"] for i in test]
        if options.get("decoding") == "argmax":
            outs = [slots for slots, _ in model.predict(texts)]
        else:
            outs = [d.values for d in model.decode(texts)]
        for i, slots in zip(test, outs, strict=True):
            predicted[i] = slots
            labels[i] = route(slots).label
        if use_labels:
            # the black-box baseline on exactly the same texts and labels (crowd and silver train)
            clf = train_label_classifier(
                [r["hidden_emo_text"] for r in crowd] + [items[i]["text"] for i in train],
                [r["emotion"] for r in crowd] + [items[i]["emotion"] for i in train],
                seed=SEED,
            )
            for i, label in zip(test, clf.predict(texts), strict=True):
                baseline[i] = label
        print(f"  {name}: fold done in {seconds[-1]:.1f} s", file=sys.stderr, flush=True)
    rate = prefill_rate(model, options, rows)
    n = len(items)
    slot_a = sum(predicted[i][s] == gold[i][s] for i in range(n) for s in SLOT_NAMES) / (n * len(SLOT_NAMES))
    slot_b = sum(predicted[i][s] == pass_b[i][s] for i in range(n) for s in SLOT_NAMES) / (
        n * len(SLOT_NAMES)
    )
    correct = sum(labels[i] == items[i]["emotion"] for i in range(n))
    abstained = sum(labels[i] == "abstain" for i in range(n))
    routed = Proportion.of(correct, n)
    selective = Proportion.of(correct, n - abstained)
    predicted_list = [predicted[i] for i in range(n)]
    notes = {
        "items": "silver-156",
        "cv": f"{FOLDS}-fold stratified, seed {SEED}",
        "options": options,
        "load_average": round(os.getloadavg()[0], 2),  # the machine is shared: how busy it was
    }
    out = [
        figure(f"{name}: per-slot accuracy against pass A", round(slot_a, 4), "share", **notes),
        figure(f"{name}: per-slot accuracy against pass B", round(slot_b, 4), "share", **notes),
        figure(
            f"{name}: mean per-slot alpha against pass A", mean_alpha(predicted_list, gold), "alpha", **notes
        ),
        figure(
            f"{name}: mean per-slot alpha against pass B",
            mean_alpha(predicted_list, pass_b),
            "alpha",
            **notes,
        ),
        figure(
            f"{name}: routed accuracy",
            round(routed.value, 4),
            "share",
            interval=[round(routed.low, 4), round(routed.high, 4)],
            **notes,
        ),
        figure(f"{name}: abstention", round(abstained / n, 4), "share", **notes),
        figure(
            f"{name}: selective accuracy",
            round(selective.value, 4) if selective.value is not None else None,
            "share",
            interval=[round(selective.low, 4), round(selective.high, 4)]
            if selective.value is not None
            else None,
            **notes,
        ),
        figure(
            f"{name}: per-slot accuracy by slot",
            {s: round(sum(predicted[i][s] == gold[i][s] for i in range(n)) / n, 4) for s in SLOT_NAMES},
            "share",
            **notes,
        ),
        figure(
            f"{name}: training seconds per fold (mean)", round(sum(seconds) / len(seconds), 1), "s", **notes
        ),
        figure(
            f"{name}: prefill throughput, batches of {BATCH}, texts not seen before",
            round(rate),
            "items/s",
            target=">= 500",
            met=rate >= 500,
            **notes,
        ),
    ]
    if baseline:
        b = Proportion.of(sum(baseline[i] == items[i]["emotion"] for i in range(n)), n)
        out.append(
            figure(
                f"{name}: label baseline on the same texts and labels",
                round(b.value, 4),
                "share",
                interval=[round(b.low, 4), round(b.high, 4)],
                **notes,
            )
        )
    return out


def mean_alpha(predicted: Sequence[dict[str, str]], reference: Sequence[dict[str, str]]) -> float | None:
    """Krippendorff's alpha per slot with the parser and the pass as two coders (nominal, as the
    agreement pages compute it), averaged over the slots where it is defined."""
    import numpy as np

    from nsmcore.agreement import agreement
    from nsmcore.schema import SLOTS

    codes = [
        [[slot.values.index(row[slot.name]) for slot in SLOTS] for row in pair]
        for pair in zip(predicted, reference, strict=True)
    ]
    value = agreement(np.asarray(codes, dtype=np.int16), bootstrap=0).mean_alpha
    return None if value is None else round(value, 4)


def test_split(name: str, items, gold, rows) -> list[dict]:
    """The configuration trained on all of silver-156 and every train/val text not in it, scored
    on the crowd-enVent test split's texts not in silver-156, beside the label baseline trained
    on the same texts and labels."""
    from nsmcore.baselines import train_label_classifier
    from nsmcore.evaluation_report import Proportion
    from nsmcore.mapper import route
    from nsmcore.parsers.classifier_training import train_classifier
    from nsmcore.parsers.supervision import LabelledText

    use_labels, options = CONFIGS[name]
    silver_ids = {str(i["text_id"]) for i in items}
    silver_texts = {_norm(i["text"]) for i in items}

    def outside(r: dict[str, str]) -> bool:
        return r["text_id"] not in silver_ids and _norm(r["hidden_emo_text"]) not in silver_texts

    train_rows = [r for r in rows if r["split"] != "test" and outside(r)]
    test_rows = [r for r in rows if r["split"] == "test" and outside(r)]
    labelled = (
        [LabelledText(r["hidden_emo_text"], r["emotion"], {k: r[k] for k in APPRAISAL_KEYS}, r["text_id"])
         for r in train_rows]
        if use_labels
        else []
    )  # fmt: skip
    model = train_classifier(
        [(i["text"], g) for i, g in zip(items, gold, strict=True)], seed=SEED, labelled=labelled, **options
    )
    texts = [r["hidden_emo_text"] for r in test_rows]
    if options.get("decoding") == "argmax":
        labels = [route(slots).label for slots, _ in model.predict(texts)]
    else:
        labels = [d.label for d in model.decode(texts)]
    truth = [r["emotion"] for r in test_rows]
    n = len(truth)
    correct = sum(a == b for a, b in zip(labels, truth, strict=True))
    abstained = labels.count("abstain")
    routed, selective = Proportion.of(correct, n), Proportion.of(correct, n - abstained)
    notes = {
        "items": f"crowd-enVent test split minus silver-156 ({n} texts, hidden_emo_text)",
        "trained_on": f"silver-156 pass A + {len(labelled)} labelled train/val texts",
        "options": options,
        "load_average": round(os.getloadavg()[0], 2),
    }
    out = [
        figure(f"{name}: test split routed accuracy", round(routed.value, 4), "share",
               interval=[round(routed.low, 4), round(routed.high, 4)], **notes),
        figure(f"{name}: test split abstention", round(abstained / n, 4), "share", **notes),
        figure(f"{name}: test split selective accuracy",
               None if selective.value is None else round(selective.value, 4), "share", **notes),
    ]  # fmt: skip
    if use_labels:
        clf = train_label_classifier(
            [r["hidden_emo_text"] for r in train_rows] + [i["text"] for i in items],
            [r["emotion"] for r in train_rows] + [i["emotion"] for i in items],
            seed=SEED,
        )
        b = Proportion.of(sum(a == t for a, t in zip(clf.predict(texts), truth, strict=True)), n)
        out.append(
            figure(f"{name}: test split label baseline on the same texts and labels", round(b.value, 4),
                   "share", interval=[round(b.low, 4), round(b.high, 4)], **notes)
        )  # fmt: skip
    print(f"  {name}: test split done", file=sys.stderr, flush=True)
    return out


APPRAISAL_KEYS: tuple[str, ...] = ()
BATCH = 32  # a prefill job's batch (NSM_JOB_BATCH_SIZE's default)
N_RATE = 1000


def prefill_rate(model: Any, options: dict[str, Any], rows: Sequence[dict[str, str]]) -> float:
    """Items per second of the last fold's model over 1,000 crowd-enVent texts as a prefill job
    parses them (batches of 32, decoded as configured), the encoder's memo emptied first so no
    embedding is free."""
    if options.get("encoder"):
        from nsmcore.encoder import load_encoder

        load_encoder(options["encoder"])._memo.clear()
    texts = [r["generated_text"] for r in rows[:N_RATE]]
    started = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        batch = texts[lo : lo + BATCH]
        if options.get("decoding") == "argmax":
            model.predict(batch)
        else:
            model.decode(batch)
    return len(texts) / (time.perf_counter() - started)


#: the learning curve's sizes: labelled crowd-enVent texts per fold (None: every one allowed)
CURVE_SIZES: tuple[int | None, ...] = (0, 250, 1000, 2500, None)
CURVE_OPTIONS: dict[str, Any] = {"decoding": "joint"}  # n-grams only: the curve's 25 fits stay minutes
CURVE_SVG = ROOT / "docs" / "figures" / "parser-learning-curve.svg"


def learning_curve(items, gold, rows, folds) -> list[dict]:
    """Routed accuracy, per-slot accuracy against pass A and the label baseline on the same
    texts, against the number of labelled texts each fold trains on (a seeded sample of the
    texts the fold may use), with the same folds as the configurations; and the chart as SVG."""
    import random

    from nsmcore.baselines import train_label_classifier
    from nsmcore.mapper import route
    from nsmcore.parsers.classifier_training import train_classifier
    from nsmcore.parsers.supervision import LabelledText
    from nsmcore.schema import SLOT_NAMES

    n = len(items)
    points = []
    for size in CURVE_SIZES:
        right = slots_right = base_right = 0
        used = []
        for train, test in folds:
            train, crowd = fold_training(items, train, test, rows)
            if size is not None:
                crowd = random.Random(SEED).sample(crowd, min(size, len(crowd)))
            used.append(len(crowd))
            labelled = [LabelledText(r["hidden_emo_text"], r["emotion"], {}, r["text_id"]) for r in crowd]
            model = train_classifier(
                [(items[i]["text"], gold[i]) for i in train], seed=SEED, labelled=labelled, **CURVE_OPTIONS
            )
            texts = [items[i]["text"] for i in test]
            for i, d in zip(test, model.decode(texts), strict=True):
                right += route(d.values).label == items[i]["emotion"]
                slots_right += sum(d.values[s] == gold[i][s] for s in SLOT_NAMES)
            clf = train_label_classifier(
                [r["hidden_emo_text"] for r in crowd] + [items[i]["text"] for i in train],
                [r["emotion"] for r in crowd] + [items[i]["emotion"] for i in train],
                seed=SEED,
            )
            base_right += sum(p == items[i]["emotion"] for i, p in zip(test, clf.predict(texts), strict=True))
        labelled_n = round(sum(used) / len(used))
        points.append((labelled_n, right / n, slots_right / (n * len(SLOT_NAMES)), base_right / n))
        print(f"  curve: {labelled_n} labelled texts: routed {right / n:.3f}", file=sys.stderr, flush=True)
    CURVE_SVG.parent.mkdir(parents=True, exist_ok=True)
    CURVE_SVG.write_text(curve_svg(points), encoding="utf-8")
    notes = {
        "items": "silver-156",
        "cv": f"{FOLDS}-fold stratified, seed {SEED}",
        "options": CURVE_OPTIONS,
        "load_average": round(os.getloadavg()[0], 2),
        "chart": str(CURVE_SVG.relative_to(ROOT)),
    }
    return [
        figure(
            "learning curve: labelled texts per fold -> routed, per-slot (pass A), label baseline accuracy",
            [
                {"labelled": k, "routed": round(r, 4), "per_slot": round(s, 4), "label_baseline": round(b, 4)}
                for k, r, s, b in points
            ],
            "share",
            **notes,
        )
    ]


def curve_svg(points: Sequence[tuple[int, float, float, float]]) -> str:
    """The learning curve as a standalone SVG: three lines against labelled texts per fold."""
    from nsmcore.charts import line_chart

    series = [
        ("routed accuracy", 1, "#1f6feb"),
        ("per-slot accuracy (pass A)", 2, "#2da44e"),
        ("label baseline", 3, "#8250df"),
    ]
    charts = [
        line_chart([(p[0], p[k]) for p in points], width=520, height=220, pad=44, y_min=0.0, y_max=1.0)
        for _, k, _ in series
    ]
    c = charts[0]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {c["width"]:.0f} {c["height"] + 40:.0f}" '
        f'width="{c["width"]:.0f}" height="{c["height"] + 40:.0f}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<line x1="{c["left"]}" x2="{c["right"]}" y1="{c["bottom"]}" y2="{c["bottom"]}" stroke="#555"/>',
        f'<line x1="{c["left"]}" x2="{c["left"]}" y1="{c["top"]}" y2="{c["bottom"]}" stroke="#555"/>',
    ]
    for t in c["y_ticks"]:
        parts.append(f'<text x="{c["left"] - 6}" y="{t["y"] + 4:.1f}" text-anchor="end">{t["label"]}</text>')
    for p in points:
        x = charts[0]["dots"][points.index(p)]["x"]
        parts.append(f'<text x="{x:.1f}" y="{c["bottom"] + 16}" text-anchor="middle">{p[0]:,}</text>')
    for (_, _, colour), chart in zip(series, charts, strict=True):
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{chart["points"]}"/>')
        parts += [
            f'<circle cx="{d["x"]:.1f}" cy="{d["y"]:.1f}" r="3" fill="{colour}"/>' for d in chart["dots"]
        ]
    for k, (label, _, colour) in enumerate(series):
        x = c["left"] + 10 + k * 190
        parts.append(f'<rect x="{x}" y="10" width="12" height="3" fill="{colour}"/>')
        parts.append(f'<text x="{x + 16}" y="15">{label}</text>')
    parts.append(
        f'<text x="{(c["left"] + c["right"]) / 2:.0f}" y="{c["bottom"] + 34}" text-anchor="middle">'
        "labelled crowd-enVent texts per fold (besides ~125 silver explications); held-out silver-156, "
        "5-fold CV</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def run(
    quick: bool = False,
    configs: Sequence[str] | None = None,
    curve: bool | None = None,
    split: bool = False,
) -> list[dict]:
    from sklearn.model_selection import StratifiedKFold

    from nsmcore.baselines import APPRAISALS

    global APPRAISAL_KEYS
    APPRAISAL_KEYS = APPRAISALS
    if not (SILVER / "items.jsonl").is_file() or not CROWD.is_dir():
        print("../shared/data not found: no figures written", file=sys.stderr)
        return []
    items = _jsonl(SILVER / "items.jsonl")
    by_id_a = {r["text_id"]: r for r in _jsonl(SILVER / "pass-a.jsonl")}
    by_id_b = {r["text_id"]: r for r in _jsonl(SILVER / "pass-b.jsonl")}
    from nsmcore.schema import SLOT_NAMES

    gold = [{s: by_id_a[i["text_id"]][s] for s in SLOT_NAMES} for i in items]
    pass_b = [{s: by_id_b[i["text_id"]][s] for s in SLOT_NAMES} for i in items]
    rows = crowd_rows()
    folds = list(
        StratifiedKFold(FOLDS, shuffle=True, random_state=SEED).split(items, [i["emotion"] for i in items])
    )
    figures = []
    for name in configs or (["gold-argmax", "gold-joint"] if quick else list(CONFIGS)):
        figures += run_config(name, items, gold, pass_b, rows, folds)
        if split:
            figures += test_split(name, items, gold, rows)
    if curve if curve is not None else not quick:
        figures += learning_curve(items, gold, rows, folds)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.common import write

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--configs", default="", help=f"comma-separated, of: {', '.join(CONFIGS)}")
    parser.add_argument(
        "--curve", choices=("yes", "no"), default=None, help="the learning curve (default: not --quick)"
    )
    parser.add_argument("--test-split", action="store_true", help="also score each on the test split")
    parser.add_argument(
        "--merge", action="store_true", help="keep the results file's figures of configurations not run"
    )
    args = parser.parse_args(argv)
    configs = [c for c in args.configs.split(",") if c] or None
    unknown = [c for c in configs or [] if c not in CONFIGS]
    if unknown:
        print(f"unknown configuration(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    curve = args.curve == "yes" if args.curve is not None else not args.quick
    figures = run(args.quick, configs, curve, args.test_split)
    if not figures:
        return 0
    ran = sorted(
        {f["name"].split(":")[0] for f in figures if ":" in f["name"]}
        | ({"learning curve"} if curve else set())
    )
    runs = [{"configs": ran}]
    if args.merge:
        figures, runs = merged(figures, ran)
    path = write("parser", figures)
    doc = json.loads(path.read_text())
    runs[-1]["measured_at"] = doc["measured_at"]
    doc["runs"] = runs
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(path)
    return 0


def merged(figures: list[dict], ran: list[str]) -> tuple[list[dict], list[dict]]:
    """The results file's figures of the configurations not run now, then this run's; its runs
    with this one last."""
    from benchmarks.common import RESULTS

    path = RESULTS / "parser.json"
    if not path.is_file():
        return figures, [{"configs": ran}]
    old = json.loads(path.read_text())

    def config(f: dict) -> str:
        return f["name"].split(":")[0] if ":" in f["name"] else "learning curve"

    kept = [f for f in old.get("figures", []) if config(f) not in ran]
    return kept + figures, [*old.get("runs", []), {"configs": ran}]


if __name__ == "__main__":
    raise SystemExit(main())
