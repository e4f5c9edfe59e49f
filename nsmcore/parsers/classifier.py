"""The classifier parser: one scikit-learn classifier per slot over the text, trained from gold.

It is the learned baseline every team can run without a GPU: word (1-2) and character (2-5,
within word boundaries) TF-IDF n-grams, shared by the twelve slots, and per slot a logistic
regression with balanced class weights, so that a rare value (``others_know=can-know``,
``body=yes``) is not drowned by the default. It trains in seconds on a CPU.

A slot whose training data holds one value only predicts that value. Predictions are always
values seen in (validated) training data, so every output is legal.

A trained model is a folder: ``model.joblib`` (the fitted estimators) and ``card.json`` (the data
hash, sizes, options, per-slot value counts, the scikit-learn version, the creation time, the
model file's sha256 and the caller's ``meta``). ``model.joblib`` is a pickle: loading it can run
code, so load only folders you (or your team) wrote. The card's sha256 catches a truncated or
swapped model file, not a malicious one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nsmcore.parsers.base import Parser, ParseResult, ParserUnavailable, Timer, result_from_object
from nsmcore.schema import SLOT_NAMES, ExplicationError, parse_slots

FORMAT = "nsm-classifier-parser"
FORMAT_VERSION = 1
MODEL_FILE = "model.joblib"
CARD_FILE = "card.json"
SETTING_HINT = (
    "set NSM_PARSER_MODEL (or the job's model field) to a folder written by "
    "`python -m nsmcore train-classifier`"
)

DEFAULT_OPTIONS: dict[str, Any] = {
    "word_ngrams": [1, 2],
    "char_ngrams": [2, 5],
    "min_df": 1,
    "C": 4.0,
    "class_weight": "balanced",
    "max_iter": 2000,
    # newton-cg: 5-20x faster than lbfgs on these sparse multi-class problems
    "solver": "newton-cg",
}


class ClassifierError(ValueError):
    """Training data or a model folder that cannot be used; the message names the problem."""


Examples = Sequence[tuple[str, Mapping[str, Any]]]


def _canonical_examples(examples: Examples) -> list[tuple[str, dict[str, str]]]:
    """Validated (text, twelve canonical slot values) pairs; the error names the example."""
    out = []
    for position, example in enumerate(examples):
        where = f"example {position + 1}"
        if not isinstance(example, tuple | list) or len(example) != 2:
            raise ClassifierError(f"{where}: expected a (text, slots) pair")
        text, slots = example
        if not isinstance(text, str) or not text.strip():
            raise ClassifierError(f"{where}: the text is empty or not a string")
        try:
            values = parse_slots(slots)
        except ExplicationError as error:
            raise ClassifierError(f"{where}: {error}") from None
        out.append((text, {name: values[name] for name in SLOT_NAMES}))
    return out


def data_hash(examples: Examples) -> str:
    """sha256 of the canonical JSON of the examples: a list, in order, of ``{"slots": {the twelve
    slots, aliases resolved}, "text": ...}`` with sorted keys, no spaces, UTF-8 unescaped."""
    canonical = [{"slots": slots, "text": text} for text, slots in _canonical_examples(examples)]
    blob = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _options_hash(options: Mapping[str, Any], seed: int) -> str:
    blob = json.dumps({"options": options, "seed": seed}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def text_features(options: Mapping[str, Any]) -> Any:
    """Word and character TF-IDF n-grams (the classifier parser and the label baseline share them)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion

    return FeatureUnion(
        [
            (
                "word",
                TfidfVectorizer(
                    analyzer="word",
                    ngram_range=tuple(options["word_ngrams"]),
                    # one-letter words count: "I" against "someone" decides experiencer
                    token_pattern=r"(?u)\b\w+\b",
                    min_df=options["min_df"],
                    sublinear_tf=True,
                ),
            ),
            (
                "char",
                TfidfVectorizer(
                    analyzer="char_wb",
                    ngram_range=tuple(options["char_ngrams"]),
                    min_df=options["min_df"],
                    sublinear_tf=True,
                ),
            ),
        ]
    )


def normalise_text(text: str) -> str:
    # typographic apostrophes (U+2019) are common in crowd-written text
    return text.replace("\u2019", "'").replace("\u2018", "'")


@dataclass
class ClassifierModel:
    """The fitted features and, per slot, a classifier or (one value seen) that value."""

    features: Any
    slots: dict[str, Any]
    options: dict[str, Any]
    seed: int
    data_hash: str
    examples: int
    value_counts: dict[str, dict[str, int]]
    card: dict[str, Any] = field(default_factory=dict)

    @property
    def options_hash(self) -> str:
        return _options_hash(self.options, self.seed)

    def predict(self, texts: Sequence[str]) -> list[tuple[dict[str, str], dict[str, float]]]:
        """Per text, the twelve slot values and each one's probability under its classifier."""
        if not texts:
            return []
        matrix = self.features.transform([normalise_text(t) for t in texts])
        values: dict[str, list[str]] = {}
        probs: dict[str, list[float]] = {}
        for name in SLOT_NAMES:
            model = self.slots[name]
            if isinstance(model, str):
                values[name] = [model] * len(texts)
                probs[name] = [1.0] * len(texts)
                continue
            proba = model.predict_proba(matrix)  # a sparse product: no BLAS threads to limit
            best = proba.argmax(axis=1)
            values[name] = [str(model.classes_[k]) for k in best]
            probs[name] = [float(proba[i, k]) for i, k in enumerate(best)]
        return [
            ({n: values[n][i] for n in SLOT_NAMES}, {n: probs[n][i] for n in SLOT_NAMES})
            for i in range(len(texts))
        ]

    def save(self, folder: str | Path, *, meta: Mapping[str, Any] | None = None) -> Path:
        """Write ``model.joblib`` and ``card.json`` into ``folder`` (made if absent). Each file is
        written beside its place and renamed when complete; the card goes last and names the
        model file's sha256, so a folder is never read with a half-written model."""
        import joblib
        import sklearn

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        model_path = folder / MODEL_FILE
        stored = {"features": self.features, "slots": self.slots}
        _atomic_write(model_path, lambda path: joblib.dump(stored, path))
        digest = _sha256_file(model_path)
        card = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "data_hash": self.data_hash,
            "sizes": {
                "examples": self.examples,
                "features": int(sum(len(t.vocabulary_) for _, t in self.features.transformer_list)),
            },
            "options": self.options,
            "seed": self.seed,
            "value_counts": self.value_counts,
            "sklearn_version": sklearn.__version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "model_file": MODEL_FILE,
            "model_sha256": digest,
            "meta": dict(meta or {}),
        }
        text = json.dumps(card, indent=2, ensure_ascii=False) + "\n"
        _atomic_write(folder / CARD_FILE, lambda path: Path(path).write_text(text, encoding="utf-8"))
        self.card = card
        return folder


def _atomic_write(path: Path, write: Any) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def one_blas_thread() -> Any:
    """A context that keeps BLAS to one thread. These fits are many small sparse products: on a
    shared 2-core machine a multi-threaded BLAS spins against itself (about 4 s against 0.3 s for
    125 silver items), and with one thread the result is the same."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def train_classifier(examples: Examples, *, seed: int = 0, **options: Any) -> ClassifierModel:
    """Fit the features and one classifier per slot on (text, slots) examples.

    Options (defaults in DEFAULT_OPTIONS): ``word_ngrams``, ``char_ngrams`` ([low, high]),
    ``min_df``, ``C`` (inverse regularisation), ``class_weight`` ("balanced" or None),
    ``max_iter``, ``solver``. Raises ClassifierError naming a bad example or option."""
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
    rows = _canonical_examples(examples)
    if not rows:
        raise ClassifierError("no training examples")
    texts = [normalise_text(text) for text, _ in rows]
    with one_blas_thread():
        features = text_features(chosen)
        matrix = features.fit_transform(texts)
        slots, counts = _fit_slots(matrix, rows, chosen, seed)
    return ClassifierModel(features, slots, chosen, seed, data_hash(rows), len(rows), counts)


def _fit_slots(
    matrix: Any, rows: list[tuple[str, dict[str, str]]], chosen: dict[str, Any], seed: int
) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    from sklearn.linear_model import LogisticRegression

    slots: dict[str, Any] = {}
    counts: dict[str, dict[str, int]] = {}
    for name in SLOT_NAMES:
        targets = [slots_[name] for _, slots_ in rows]
        counted = Counter(targets)
        counts[name] = dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))
        if len(counted) == 1:
            slots[name] = targets[0]
            continue
        model = LogisticRegression(
            C=float(chosen["C"]),
            class_weight=chosen["class_weight"],
            max_iter=int(chosen["max_iter"]),
            solver=chosen["solver"],
            random_state=seed,
        )
        model.fit(matrix, targets)
        slots[name] = model
    return slots, counts


def load_classifier(folder: str | Path) -> ClassifierModel:
    """Read a folder written by :meth:`ClassifierModel.save`. Raises ClassifierError naming the
    problem (no folder, no or bad card, a model file that does not match its card, a different
    scikit-learn version). The model file is a pickle: load only folders you made."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ClassifierError(f"no model folder at {folder}")
    card_path = folder / CARD_FILE
    if not card_path.is_file():
        raise ClassifierError(f"{folder} has no {CARD_FILE}: not a folder written by train-classifier")
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ClassifierError(f"{card_path}: unreadable card: {error}") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT:
        raise ClassifierError(f"{card_path}: not a classifier parser card (format {FORMAT!r} expected)")
    if card.get("format_version") != FORMAT_VERSION:
        raise ClassifierError(
            f"{card_path}: card format version {card.get('format_version')!r}; "
            f"this code reads {FORMAT_VERSION}"
        )
    import joblib
    import sklearn

    if card.get("sklearn_version") != sklearn.__version__:
        raise ClassifierError(
            f"{folder} was trained with scikit-learn {card.get('sklearn_version')}, this is "
            f"{sklearn.__version__}: retrain it (it takes seconds)"
        )
    model_path = folder / str(card.get("model_file", MODEL_FILE))
    if not model_path.is_file():
        raise ClassifierError(f"{folder} has no {model_path.name}")
    if _sha256_file(model_path) != card.get("model_sha256"):
        raise ClassifierError(f"{model_path} does not match the sha256 in its card (truncated or replaced)")
    try:
        stored = joblib.load(model_path)
        features, slots = stored["features"], stored["slots"]
    except Exception as error:  # a damaged pickle can raise almost anything
        raise ClassifierError(f"{model_path}: cannot load: {type(error).__name__}: {error}") from None
    if not isinstance(slots, dict) or set(slots) != set(SLOT_NAMES):
        raise ClassifierError(f"{model_path}: does not hold one classifier per slot")
    return ClassifierModel(
        features,
        slots,
        dict(card.get("options", {})),
        int(card.get("seed", 0)),
        str(card.get("data_hash", "")),
        int(card.get("sizes", {}).get("examples", 0)),
        dict(card.get("value_counts", {})),
        card,
    )


class ClassifierParser(Parser):
    """The ``classifier`` backend: ``model`` is a folder written by train-classifier."""

    backend = "classifier"

    def __init__(self, model: str = ""):
        if not model:
            raise ParserUnavailable(f"classifier parser: no model folder given; {SETTING_HINT}")
        try:
            self.model = load_classifier(model)
        except ClassifierError as error:
            raise ParserUnavailable(f"classifier parser: {error}; {SETTING_HINT}") from None
        self.model_source = str(model)

    @property
    def name(self) -> str:
        return f"classifier:{self.model_source}"

    @property
    def version(self) -> str:
        return f"data-{self.model.data_hash[:12]}-opts-{self.model.options_hash[:8]}"

    def parse(self, texts: Sequence[str]) -> list[ParseResult]:
        timer = Timer()
        predicted = self.model.predict(list(texts))
        seconds = timer.per_item(len(texts))
        results = []
        for slots, probs in predicted:
            raw = json.dumps(
                {n: {"value": slots[n], "p": round(probs[n], 4)} for n in SLOT_NAMES}, separators=(",", ":")
            )
            results.append(result_from_object(slots, raw, seconds))
        return results
