"""The baselines the paper compares the faithful pathway with, on the same items.

- :func:`train_label_classifier`: a black-box text classifier of the emotion label (TF-IDF word
  1-2-grams and character 2-5-grams, logistic regression with balanced class weights). It says
  nothing about why; it shows what accuracy the explication bottleneck costs or gains.
- :func:`train_appraisal_baseline`: the emotion label from the 21 crowd-enVent appraisal ratings
  (standardised, logistic regression with balanced class weights), the appraisal-theory
  pathway the corpus was built for. Its regularisation C is chosen by an inner stratified
  cross-validation on the training items alone (``C_GRID``; it moved the crowd-enVent figure from
  .199 at a fixed C=1 to .231, issue 26), and the model records the C and how it was chosen.

Both predict a label for every item (they never abstain). Ratings are read as the item import
stores them (``Item.appraisals``: rating name -> whole number, 1-5). A missing or non-numeric
rating is an error naming the item and the rating: no imputation, so a figure is never computed
on silently invented ratings.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nsmcore.parsers.classifier import normalise_text, one_blas_thread, text_features

# The 21 appraisal ratings of crowd-enVent, in the corpus's column order (the import stores
# them under these names, reading this tuple).
APPRAISALS: tuple[str, ...] = (
    "suddenness",
    "familiarity",
    "predict_event",
    "pleasantness",
    "unpleasantness",
    "goal_relevance",
    "chance_responsblt",
    "self_responsblt",
    "other_responsblt",
    "predict_conseq",
    "goal_support",
    "urgency",
    "self_control",
    "other_control",
    "chance_control",
    "accept_conseq",
    "standards",
    "social_norms",
    "attention",
    "not_consider",
    "effort",
)

LABEL_OPTIONS: dict[str, Any] = {"word_ngrams": [1, 2], "char_ngrams": [2, 5], "min_df": 1}
# the appraisal baseline's regularisation: the grid its inner cross-validation searches
C_GRID: tuple[float, ...] = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
INNER_FOLDS = 5


class BaselineError(ValueError):
    """Input a baseline cannot use; the message names the item (1-based) and the problem."""


def _check_labels(labels: Sequence[str], n: int) -> list[str]:
    labels = list(labels)
    if len(labels) != n:
        raise BaselineError(f"{n} inputs but {len(labels)} labels")
    if not labels:
        raise BaselineError("no training examples")
    bad = next((i for i, label in enumerate(labels) if not isinstance(label, str) or not label), None)
    if bad is not None:
        raise BaselineError(f"item {bad + 1}: the label must be a non-empty string, got {labels[bad]!r}")
    return labels


def _model(seed: int, C: float = 1.0) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(
        C=C, class_weight="balanced", max_iter=2000, solver="newton-cg", random_state=seed
    )


def _fit(matrix: Any, labels: list[str], seed: int, C: float) -> Any:
    """A logistic regression, or the one label when training data has one only."""
    if len(set(labels)) == 1:
        return labels[0]
    with one_blas_thread():
        return _model(seed, C).fit(matrix, labels)


def choose_C(matrix: Any, labels: list[str], seed: int) -> tuple[float, str]:
    """The C of ``C_GRID`` with the best mean log-loss over a stratified inner cross-validation of
    the training items (scikit-learn's GridSearchCV), and a sentence saying how it was chosen.
    Log-loss rather than accuracy: accuracy ties across much of the grid on small or separable
    data, and a tie went to the strongest regularisation, which then misread held-out items.
    With fewer than two items of some label there are no folds: C=1, said so."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    counts = Counter(labels)
    folds = min(INNER_FOLDS, min(counts.values()))
    if len(counts) < 2 or folds < 2:
        return 1.0, "C=1, fixed: too few items of some label for an inner cross-validation"
    search = GridSearchCV(
        _model(seed),
        {"C": list(C_GRID)},
        cv=StratifiedKFold(folds, shuffle=True, random_state=seed),
        scoring="neg_log_loss",
        refit=False,
    )
    with one_blas_thread():
        search.fit(matrix, labels)
    C = float(search.best_params_["C"])
    grid = ", ".join(f"{c:g}" for c in C_GRID)
    return (
        C,
        f"C={C:g}, chosen by {folds}-fold cross-validation (log-loss) within the training items over {grid}",
    )


def _predict(model: Any, matrix: Any, n: int) -> list[str]:
    if isinstance(model, str):
        return [model] * n
    return [str(label) for label in model.predict(matrix)]


@dataclass
class LabelClassifier:
    features: Any
    model: Any  # a LogisticRegression, or the one label seen

    def predict(self, texts: Sequence[str]) -> list[str]:
        texts = list(texts)
        if not texts:
            return []
        return _predict(self.model, self.features.transform([normalise_text(t) for t in texts]), len(texts))


def train_label_classifier(
    texts: Sequence[str], labels: Sequence[str], seed: int = 0, *, C: float = 4.0
) -> LabelClassifier:
    """Fit the black-box label classifier on texts and their emotion labels."""
    texts = list(texts)
    labels = _check_labels(labels, len(texts))
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str) or not t.strip()), None)
    if bad is not None:
        raise BaselineError(f"item {bad + 1}: the text is empty or not a string")
    features = text_features(LABEL_OPTIONS)
    matrix = features.fit_transform([normalise_text(t) for t in texts])
    return LabelClassifier(features, _fit(matrix, labels, seed, C))


def appraisal_matrix(ratings: Sequence[Mapping[str, Any]]) -> list[list[float]]:
    """The (n, 21) matrix of ratings in APPRAISALS order; BaselineError names the first item with
    a missing or non-numeric rating."""
    rows = []
    for position, item in enumerate(ratings):
        if not isinstance(item, Mapping):
            raise BaselineError(f"item {position + 1}: ratings must be a mapping, got {type(item).__name__}")
        missing = [name for name in APPRAISALS if item.get(name) in (None, "")]
        if missing:
            raise BaselineError(
                f"item {position + 1}: missing appraisal rating(s) {', '.join(missing)} "
                f"(all 21 are needed; no rating is imputed)"
            )
        row = []
        for name in APPRAISALS:
            value = item[name]
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            if isinstance(value, bool) or not math.isfinite(number):
                raise BaselineError(f"item {position + 1}: appraisal {name} = {value!r} is not a number")
            row.append(number)
        rows.append(row)
    return rows


@dataclass
class AppraisalBaseline:
    scaler: Any
    model: Any  # a LogisticRegression, or the one label seen
    C: float = 1.0
    chosen: str = "C=1, given"  # how C was chosen, for the report

    def predict(self, ratings: Sequence[Mapping[str, Any]]) -> list[str]:
        ratings = list(ratings)
        if not ratings:
            return []
        return _predict(self.model, self.scaler.transform(appraisal_matrix(ratings)), len(ratings))


def train_appraisal_baseline(
    ratings: Sequence[Mapping[str, Any]], labels: Sequence[str], seed: int = 0, *, C: float | None = None
) -> AppraisalBaseline:
    """Fit the appraisal baseline: ratings (name -> number, all 21) to emotion labels, with C
    chosen by inner cross-validation on these items unless given."""
    from sklearn.preprocessing import StandardScaler

    ratings = list(ratings)
    labels = _check_labels(labels, len(ratings))
    scaler = StandardScaler()
    matrix = scaler.fit_transform(appraisal_matrix(ratings))
    if C is not None:
        chosen = f"C={C:g}, given"
    elif len(set(labels)) > 1:
        C, chosen = choose_C(matrix, labels, seed)
    else:
        C, chosen = 1.0, "C=1: one label only"
    return AppraisalBaseline(scaler, _fit(matrix, labels, seed, C), C, chosen)
