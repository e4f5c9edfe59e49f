"""The classifier parser: one scikit-learn classifier per slot over the text, trained from gold
(and, through the rules, from labelled texts: nsmcore.parsers.classifier_training).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from nsmcore.decoding import decode, rule_lattice, rules_tag
from nsmcore.mapper import RuleSet
from nsmcore.parsers.base import (
    Parser,
    ParseResult,
    ParserUnavailable,
    Timer,
    decoded_result,
    result_from_object,
)
from nsmcore.schema import SLOT_NAMES, SLOTS, ExplicationError, parse_slots

FORMAT = "nsm-classifier-parser"
FORMAT_VERSION = 3  # 3: the model file may hold a label head (option label_prior)
READ_VERSIONS = (1, 2, 3)  # version 1 cards (argmax models) still load, decoding per slot
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
    # frozen sentence embeddings beside the n-grams: "" none, "bundled" (all-MiniLM-L6-v2), or a
    # model name or folder (nsmcore.encoder)
    "encoder": "",
    # how an explication is chosen from the per-slot scores: "joint" (the likeliest one the rule
    # set routes, nsmcore.decoding) or "argmax" (each slot's likeliest value on its own)
    "decoding": "joint",
    # joint decoding keeps the best overall explication (a no-rule abstention) when the best
    # routed one is more than this many nats less likely; null never abstains by choice; "auto"
    # chooses it on a calibration share of the labelled texts, held back from training
    "abstain_gap": None,
    # joint decoding keeps the likeliest explication no rule routes when the chosen label's
    # confidence (nsmcore.decoding.Decoded.confidence) is below this; null never; "auto" chooses
    # it on the calibration share, as abstain_gap
    "abstain_below": None,
    # a label head (logistic regression on the same features, fitted on the labelled texts'
    # labels) whose log-probabilities, times this weight, raise each label's region when
    # decoding: 0 fits no head. The slots then describe the text and the label head chooses
    # among the regions they can reach (docs/training.md)
    "label_prior": 0.0,
    # training through the rules on labelled texts (nsmcore.parsers.supervision): EM rounds, the
    # weight of a labelled text's soft targets against a gold explication's 1, the probability
    # that a label is the one its explication routes to, and the appraisal evidence's exponent
    "iterations": 2,
    "label_weight": 0.3,
    "label_trust": 1.0,
    "appraisal_weight": 0.0,
}


class ClassifierError(ValueError):
    """Training data or a model folder that cannot be used; the message names the problem."""


Examples = Sequence[tuple[str, Mapping[str, Any]]]


def canonical_examples(examples: Examples) -> list[tuple[str, dict[str, str]]]:
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
    canonical = [{"slots": slots, "text": text} for text, slots in canonical_examples(examples)]
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
    #: what trained it besides the gold pairs: hashes, counts, ids (recorded in the card)
    sources: dict[str, Any] = field(default_factory=dict)
    #: the label classifier of option label_prior (None: no label prior)
    label_head: Any = None

    @property
    def options_hash(self) -> str:
        return _options_hash(self.options, self.seed)

    def matrix(self, texts: Sequence[str]) -> Any:
        """The feature matrix of ``texts``: n-grams, and the encoder's embeddings if it has one."""
        return features_matrix(self.features, self.options, [normalise_text(t) for t in texts])

    def log_proba(self, texts: Sequence[str], *, matrix: Any = None) -> list[np.ndarray]:
        """Per slot (schema order), an (n, values) array of log-probabilities; a value never seen
        in training gets probability 0 (log -inf), so it is never chosen."""
        if matrix is None:
            matrix = self.matrix(texts) if len(texts) else None
        return slot_log_proba(self.slots, matrix, len(texts))

    def predict(self, texts: Sequence[str]) -> list[tuple[dict[str, str], dict[str, float]]]:
        """Per text, each slot's likeliest value on its own and its probability (argmax per slot)."""
        if not texts:
            return []
        logp = self.log_proba(texts)
        best = [a.argmax(axis=1) for a in logp]
        return [
            (
                {slot.name: slot.values[int(best[s][i])] for s, slot in enumerate(SLOTS)},
                {slot.name: float(np.exp(logp[s][i, best[s][i]])) for s, slot in enumerate(SLOTS)},
            )
            for i in range(len(texts))
        ]

    def decode(self, texts: Sequence[str], *, rule_set: RuleSet | None = None) -> list[Any]:
        """Per text, the joint decoding (nsmcore.decoding.Decoded) inside the rule set, with the
        label head's prior when the model has one."""
        if not texts:
            return []
        lattice = rule_lattice(rule_set)
        matrix = self.matrix(texts)
        prior = None
        if self.label_head is not None and self.options.get("label_prior"):
            weight = float(self.options["label_prior"])
            prior = weight * label_log_proba(self.label_head, matrix, lattice.labels)
        return decode(
            self.log_proba(texts, matrix=matrix),
            lattice=lattice,
            abstain_gap=self.options.get("abstain_gap"),
            abstain_below=self.options.get("abstain_below"),
            label_prior=prior,
        )

    def save(self, folder: str | Path, *, meta: Mapping[str, Any] | None = None) -> Path:
        """Write ``model.joblib`` and ``card.json`` into ``folder`` (made if absent). Each file is
        written beside its place and renamed when complete; the card goes last and names the
        model file's sha256, so a folder is never read with a half-written model."""
        import joblib
        import sklearn

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        model_path = folder / MODEL_FILE
        stored = {"features": self.features, "slots": self.slots, "label_head": self.label_head}
        _atomic_write(model_path, lambda path: joblib.dump(stored, path))
        digest = _sha256_file(model_path)
        card = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "data_hash": self.data_hash,
            "sizes": {
                "examples": self.examples,
                "features": int(sum(len(t.vocabulary_) for _, t in self.features.transformer_list))
                + _encoder_dim(self.options),
            },
            "options": self.options,
            "seed": self.seed,
            "value_counts": self.value_counts,
            "sklearn_version": sklearn.__version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "model_file": MODEL_FILE,
            "model_sha256": digest,
            "sources": self.sources,
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


# The lattice of a rule set is a pure function of its content (keyed by its hash): built once per
# process (about 0.1 s) and never invalidated.
def _encoder_dim(options: Mapping[str, Any]) -> int:
    if not options.get("encoder"):
        return 0
    from nsmcore.encoder import load_encoder

    return load_encoder(options["encoder"]).dim


def features_matrix(features: Any, options: Mapping[str, Any], texts: list[str]) -> Any:
    """The n-grams and, with an encoder, its embeddings beside them (one sparse matrix)."""
    matrix = features.transform(texts)
    if not options.get("encoder"):
        return matrix
    import scipy.sparse as sp

    from nsmcore.encoder import EncoderUnavailable, load_encoder

    try:
        embeddings = load_encoder(options["encoder"]).encode(texts)
    except EncoderUnavailable as error:
        raise ClassifierError(str(error)) from None
    return sp.hstack([matrix, sp.csr_matrix(embeddings)]).tocsr()


def slot_log_proba(slots: dict[str, Any], matrix: Any, n: int) -> list[np.ndarray]:
    out = []
    for slot in SLOTS:
        model = slots[slot.name]
        a = np.zeros((n, len(slot.values)))
        if isinstance(model, str):
            a[:, slot.values.index(model)] = 1.0
        elif n:
            proba = model.predict_proba(matrix)  # a sparse product: no BLAS threads to limit
            columns = [slot.values.index(str(c)) for c in model.classes_]
            a[:, columns] = proba
        with np.errstate(divide="ignore"):
            out.append(np.log(a))
    return out


#: a seen label's probability is kept above this (log 1e-6): a head sure of one label still
#: leaves the others reachable when the slots say so strongly
SEEN_LABEL_FLOOR = float(np.log(1e-6))


def label_log_proba(head: Any, matrix: Any, labels: Sequence[str]) -> np.ndarray:
    """(n, len(labels)) log-probabilities of the label head, in ``labels`` order (a rule set's
    rules). A label the head never saw (its labelled texts had none) gets the log of one over the
    number of labels it knows: what it gives each label when it cannot tell them apart, so it
    says nothing for or against that label and the slots decide."""
    n = matrix.shape[0]
    with np.errstate(divide="ignore"):
        logp = np.log(head.predict_proba(matrix))
    classes = [str(c) for c in head.classes_]
    neutral = float(np.log(1.0 / len(classes)))
    columns = [
        np.maximum(logp[:, classes.index(label)], SEEN_LABEL_FLOOR)
        if label in classes
        else np.full(n, neutral)
        for label in labels
    ]
    return np.stack(columns, axis=1) if columns else np.zeros((n, 0))


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
    if card.get("format_version") not in READ_VERSIONS:
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
    name = str(card.get("model_file", MODEL_FILE))
    if Path(name).name != name or name in ("", ".", ".."):  # the card may not send the loader elsewhere
        raise ClassifierError(f"{card_path}: model_file must be a file name in the folder, got {name!r}")
    model_path = folder / name
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
    options = dict(card.get("options", {}))
    if card.get("format_version") == 1:
        options.setdefault("decoding", "argmax")  # what a version 1 model was trained and judged as
    return ClassifierModel(
        features,
        slots,
        {**DEFAULT_OPTIONS, **options},
        int(card.get("seed", 0)),
        str(card.get("data_hash", "")),
        int(card.get("sizes", {}).get("examples", 0)),
        dict(card.get("value_counts", {})),
        card,
        dict(card.get("sources", {})),
        stored.get("label_head"),
    )


class ClassifierParser(Parser):
    """The ``classifier`` backend: ``model`` is a folder written by train-classifier."""

    backend = "classifier"

    def __init__(self, model: str = "", rule_set: RuleSet | None = None, label: str = ""):
        if not model:
            raise ParserUnavailable(f"classifier parser: no model folder given; {SETTING_HINT}")
        try:
            self.model = load_classifier(model)
        except ClassifierError as error:
            raise ParserUnavailable(f"classifier parser: {error}; {SETTING_HINT}") from None
        self.model_source = str(model)
        self.rule_set = rule_set
        #: a registry's NAME@VERSION: predictions are named by it instead of the folder
        self.label = label

    #: the rule set joint decoding routes into (None: the bundled default); the prefill job sets
    #: the active one
    rule_set: RuleSet | None = None

    @property
    def name(self) -> str:
        return f"classifier:{self.label or self.model_source}"

    @property
    def version(self) -> str:
        """The gold data's and options' hashes, the rule set it decodes into (jointly), and (a
        model trained on more than gold) a digest of its other sources (labelled texts' sha256,
        encoder identity): a model retrained on other labelled texts, or decoding into another
        rule set, is a new version, so its predictions never mix with the old ones."""
        base = f"data-{self.model.data_hash[:12]}-opts-{self.model.options_hash[:8]}"
        if self.model.options.get("decoding") != "argmax":  # decoded into a rule set: which one
            base += f"-rules-{rules_tag(self.rule_set)}"
        # the labelled texts' sha256 already covers their ids
        sources = {
            k: {kk: vv for kk, vv in v.items() if kk != "ids"} if isinstance(v, dict) else v
            for k, v in self.model.sources.items()
            if k != "gold"
        }
        if not sources:
            return base
        blob = json.dumps(sources, sort_keys=True, separators=(",", ":"), default=str)
        return f"{base}-src-{hashlib.sha256(blob.encode()).hexdigest()[:8]}"

    def parse(self, texts: Sequence[str]) -> list[ParseResult]:
        """Joint decoding inside the active rule set (or per slot, for a model trained so); the
        raw output keeps each slot's value with its probability and, decoded jointly, the label
        distribution (each rule's region mass) and the per-slot posteriors."""
        timer = Timer()
        texts = list(texts)
        if self.model.options.get("decoding") == "argmax":
            predicted = self.model.predict(texts)
            seconds = timer.per_item(len(texts))
            results = []
            for slots, probs in predicted:
                raw = json.dumps(
                    {n: {"value": slots[n], "p": round(probs[n], 4)} for n in SLOT_NAMES},
                    separators=(",", ":"),
                )
                results.append(result_from_object(slots, raw, seconds))
            return results
        decoded = self.model.decode(texts, rule_set=self.rule_set)
        seconds = timer.per_item(len(texts))
        return [decoded_result(d, seconds) for d in decoded]
