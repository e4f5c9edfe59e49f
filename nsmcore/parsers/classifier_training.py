"""Training the classifier parser (nsmcore.parsers.classifier): the gold fit, then rounds of
expectation-maximisation through the rules on labelled texts (nsmcore.parsers.supervision), the
label head of option ``label_prior``, and the "auto" abstention thresholds chosen on labelled
texts held back from training."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nsmcore.decoding import choose_gap, region_posteriors, rule_lattice
from nsmcore.mapper import RuleSet, load_rule_set
from nsmcore.parsers.classifier import (
    DEFAULT_OPTIONS,
    ClassifierError,
    ClassifierModel,
    Examples,
    canonical_examples,
    data_hash,
    features_matrix,
    normalise_text,
    one_blas_thread,
    slot_log_proba,
    text_features,
)
from nsmcore.parsers.supervision import (
    LabelledText,
    SupervisionError,
    appraisal_log_evidence,
    check_labelled,
    soft_rows,
)
from nsmcore.schema import SLOT_NAMES, SLOTS


def _check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(DEFAULT_OPTIONS))
    if unknown:
        known = ", ".join(DEFAULT_OPTIONS)
        raise ClassifierError(f"unknown option(s) {', '.join(unknown)}; options: {known}")
    chosen = {**DEFAULT_OPTIONS, **options}
    for key in ("word_ngrams", "char_ngrams"):
        low_high = chosen[key] = [int(x) for x in chosen[key]]
        if len(low_high) != 2 or not 1 <= low_high[0] <= low_high[1]:
            raise ClassifierError(f"option {key} must be [low, high] with 1 <= low <= high, got {low_high}")
    if chosen["class_weight"] not in ("balanced", None):
        weight = chosen["class_weight"]
        raise ClassifierError(f"option class_weight must be 'balanced' or None, got {weight!r}")
    if chosen["decoding"] not in ("joint", "argmax"):
        raise ClassifierError(f"option decoding must be 'joint' or 'argmax', got {chosen['decoding']!r}")
    for key, low, high in NUMBER_OPTIONS:
        value = chosen[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise ClassifierError(f"option {key} must be a number from {low:g} to {high:g}, got {value!r}")
        chosen[key] = float(value)
    iterations = chosen["iterations"]
    if isinstance(iterations, bool) or not isinstance(iterations, int) or not 0 <= iterations <= 20:
        raise ClassifierError(f"option iterations must be a whole number from 0 to 20, got {iterations!r}")
    # the abstention thresholds: None (never), "auto" (chosen on held-back labels) or a number
    for key, ok, what in (
        ("abstain_gap", lambda x: x >= 0, "a number >= 0"),
        ("abstain_below", lambda x: 0 < x < 1, "a number between 0 and 1"),
    ):
        value = chosen[key]
        if value is None or value == "auto":
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not ok(value):
            raise ClassifierError(f"option {key} must be null, 'auto' or {what}, got {value!r}")
    if not isinstance(chosen["encoder"], str):
        raise ClassifierError(f"option encoder must be a model name or folder, got {chosen['encoder']!r}")
    return chosen


#: (option, lowest, highest) of the numeric options of training through the rules
NUMBER_OPTIONS = (
    ("label_weight", 0.0, 100.0),
    ("label_trust", 1e-6, 1.0),
    ("appraisal_weight", 0.0, 10.0),
    ("label_prior", 0.0, 100.0),
)


def train_classifier(
    examples: Examples,
    *,
    seed: int = 0,
    labelled: Sequence[LabelledText] = (),
    rule_set: RuleSet | None = None,
    progress: Any = None,
    **options: Any,
) -> ClassifierModel:
    """Fit the features and one classifier per slot on (text, slots) examples and, through the
    rules, on ``labelled`` texts (a reference label and optional appraisal ratings each).

    Options (defaults in DEFAULT_OPTIONS): ``word_ngrams``, ``char_ngrams`` ([low, high]),
    ``min_df``, ``C`` (inverse regularisation), ``class_weight`` ("balanced" or None),
    ``max_iter``, ``solver``, ``encoder``, ``decoding``, ``abstain_gap``, ``iterations``,
    ``label_weight``, ``label_trust``, ``appraisal_weight``. With labelled texts, the gold-only
    fit is refined by ``iterations`` rounds of EM (nsmcore.parsers.supervision). ``progress``,
    if given, is called with (step, total, what) after each fit. Raises ClassifierError naming a
    bad example, labelled text or option."""
    chosen = _check_options(options)
    rows = canonical_examples(examples)
    if not rows:
        raise ClassifierError("no training examples")
    rule_set = rule_set or load_rule_set()
    try:
        weak = check_labelled(list(labelled), rule_set.emotions)
    except SupervisionError as error:
        raise ClassifierError(str(error)) from None
    calibration: list[LabelledText] = []
    auto = [key for key in ("abstain_gap", "abstain_below") if chosen[key] == "auto"]
    if auto:
        if len(weak) < 2 * MIN_CALIBRATION:
            raise ClassifierError(
                f"option {auto[0]} 'auto' needs at least {2 * MIN_CALIBRATION} labelled texts "
                f"(a share is held back to choose it), got {len(weak)}"
            )
        weak, calibration = _calibration_split(weak, seed)
    if chosen["label_prior"] and not weak:
        raise ClassifierError("option label_prior needs labelled texts (its label head is fitted on them)")
    texts = [normalise_text(text) for text, _ in rows]
    weak_texts = [normalise_text(r.text) for r in weak]
    rounds = chosen["iterations"] if weak else 0
    total = 1 + rounds
    with one_blas_thread():
        features = text_features(chosen)
        features.fit(texts + weak_texts)
        gold_matrix = features_matrix(features, chosen, texts)
        weak_matrix = features_matrix(features, chosen, weak_texts) if weak else None
        targets = {name: [slots_[name] for _, slots_ in rows] for name in SLOT_NAMES}
        slots, counts = _fit_slots(gold_matrix, targets, chosen, seed)
        _tick(progress, 1, total, "fitted on gold explications")
        if weak:
            evidence = appraisal_log_evidence([r.appraisals for r in weak], weight=chosen["appraisal_weight"])
            lattice = rule_lattice(rule_set)
            labels = [r.label for r in weak]
            for step in range(rounds):
                prior = slot_log_proba(slots, weak_matrix, len(weak))
                prior = [_smoothed(p) + e for p, e in zip(prior, evidence, strict=True)]
                posteriors = region_posteriors(lattice, prior, labels, trust=chosen["label_trust"])
                soft = (weak_matrix, posteriors, chosen["label_weight"])
                slots, _ = _fit_slots(gold_matrix, targets, chosen, seed, soft=soft)
                _tick(progress, 2 + step, total, f"EM round {step + 1} of {rounds} through the rules")
        head = None
        if chosen["label_prior"]:
            head = _fit_label_head(weak_matrix, [r.label for r in weak], chosen, seed)
    sources = _sources(rows, weak, chosen, rule_set)
    model = ClassifierModel(
        features, slots, chosen, seed, data_hash(rows), len(rows), counts, sources=sources, label_head=head
    )
    if chosen["label_prior"]:
        model.sources["label_head"] = (
            {"labels": sorted(str(c) for c in head.classes_)}
            if head is not None
            else {"fitted": False, "why": "the labelled texts show one label only"}
        )
    if calibration:
        _calibrate(model, calibration, auto, rule_set)
    return model


def _fit_label_head(matrix: Any, labels: list[str], chosen: dict[str, Any], seed: int) -> Any:
    """The label classifier of option label_prior: balanced logistic regression on the same
    features as the slots (the black-box baseline's model, on this parser's features). None when
    the labelled texts show one label only: a head that knows one label would force it on every
    text, so there is none (the card's sources say so)."""
    if len(set(labels)) < 2:
        return None
    return _logistic(chosen, seed, class_weight="balanced").fit(matrix, labels)


def _logistic(chosen: dict[str, Any], seed: int, **extra: Any) -> Any:
    """The logistic regression every head of the parser uses, with the chosen C and solver."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(
        C=float(chosen["C"]), max_iter=int(chosen["max_iter"]), solver=chosen["solver"], random_state=seed,
        **extra,
    )  # fmt: skip


def _calibrate(
    model: ClassifierModel, calibration: list[LabelledText], auto: list[str], rule_set: RuleSet
) -> None:
    """Choose the "auto" abstention thresholds on the held-back labelled texts (forced choices:
    no abstention while choosing), and record what was chosen in the card's sources."""
    for key in auto:
        model.options[key] = None
    decoded = model.decode([r.text for r in calibration], rule_set=rule_set)
    correct = [d.label == r.label for d, r in zip(decoded, calibration, strict=True)]
    if "abstain_gap" in auto:
        gap = choose_gap([d.gap for d in decoded], correct)
        model.options["abstain_gap"] = None if gap == float("inf") else round(gap, 4)
    if "abstain_below" in auto:
        # the same rule on -log(confidence): abstain where forcing a label is mostly wrong
        unsure = choose_gap([-math.log(max(d.confidence, 1e-12)) for d in decoded], correct)
        model.options["abstain_below"] = None if unsure == float("inf") else round(math.exp(-unsure), 4)
    model.sources["calibration"] = {
        "texts": len(calibration),
        "ids": sorted({r.id for r in calibration if r.id}),
        "routed_right_forced": sum(correct),
        **{key: model.options[key] for key in auto},
    }


#: "auto" abstention: the share of labelled texts held back to choose the gap, and its floor
CALIBRATION_SHARE = 0.1
MIN_CALIBRATION = 20


def _calibration_split(weak: list[LabelledText], seed: int) -> tuple[list[LabelledText], list[LabelledText]]:
    """A seeded share of the labelled texts, held back from training to choose the gap on."""
    order = np.random.default_rng(seed).permutation(len(weak))
    n = max(MIN_CALIBRATION, round(CALIBRATION_SHARE * len(weak)))
    held = set(order[:n].tolist())
    return [r for k, r in enumerate(weak) if k not in held], [r for k, r in enumerate(weak) if k in held]


#: the E-step's floor: each slot's distribution is mixed with this share of the uniform one, so a
#: value no gold explication shows (body=yes in a small gold set) can still be reached when a
#: label's region needs it
PRIOR_FLOOR = 1e-3


def _smoothed(logp: np.ndarray) -> np.ndarray:
    return np.log((1.0 - PRIOR_FLOOR) * np.exp(logp) + PRIOR_FLOOR / logp.shape[1])


def _tick(progress: Any, step: int, total: int, what: str) -> None:
    if progress is not None:
        progress(step, total, what)


def _sources(
    rows: list, weak: list[LabelledText], chosen: dict[str, Any], rule_set: RuleSet
) -> dict[str, Any]:
    """What the card records of the training data besides the gold pairs' hash: enough to tell
    which texts trained the model (their ids), so an evaluation on them can be refused."""
    out: dict[str, Any] = {"gold": {"examples": len(rows)}}
    if weak:
        blob = json.dumps(
            [[r.id, r.text, r.label, dict(r.appraisals)] for r in weak],
            sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str,
        )  # fmt: skip
        out["labelled"] = {
            "texts": len(weak),
            "sha256": hashlib.sha256(blob.encode("utf-8")).hexdigest(),
            "with_appraisals": sum(bool(r.appraisals) for r in weak),
            "labels": dict(sorted(Counter(r.label for r in weak).items())),
            "ids": sorted({r.id for r in weak if r.id}),
            "rule_set_version": rule_set.version,
            "rule_set_hash": rule_set.content_hash,
        }
    if chosen["encoder"]:
        from nsmcore.encoder import load_encoder

        out["encoder"] = load_encoder(chosen["encoder"]).identity
    return out


def _fit_slots(
    matrix: Any,
    targets: dict[str, list[str]],
    chosen: dict[str, Any],
    seed: int,
    *,
    soft: tuple[Any, list[np.ndarray], float] | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """One classifier per slot on the gold targets and, if ``soft`` = (matrix, per-slot
    posteriors, weight) is given, on labelled texts' soft targets: one weighted row per text and
    value with posterior mass (how scikit-learn fits soft labels). Balanced class weights apply
    to the gold rows; a soft row carries its posterior times ``weight``."""
    import scipy.sparse as sp

    slots: dict[str, Any] = {}
    counts: dict[str, dict[str, int]] = {}
    for s, slot in enumerate(SLOTS):
        gold = targets[slot.name]
        counted = Counter(gold)
        counts[slot.name] = dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))
        weights = _balanced(gold) if chosen["class_weight"] == "balanced" else np.ones(len(gold))
        X, y = matrix, list(gold)
        if soft is not None and soft[2] > 0:
            weak_matrix, posteriors, weight = soft
            rows, values, w = soft_rows(posteriors, s, weight=weight)
            X = sp.vstack([matrix, weak_matrix[rows]]).tocsr()
            y += [slot.values[v] for v in values]
            weights = np.concatenate([weights, w])
        if len(set(y)) == 1:
            slots[slot.name] = y[0]
            continue
        model = _logistic(chosen, seed)
        model.fit(X, y, sample_weight=weights)
        slots[slot.name] = model
    return slots, counts


def _balanced(values: list[str]) -> np.ndarray:
    """scikit-learn's "balanced" class weights as row weights (n / (classes x count))."""
    counted = Counter(values)
    return np.array([len(values) / (len(counted) * counted[v]) for v in values])
