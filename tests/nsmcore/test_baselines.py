"""The paper's baselines: a black-box label classifier and the appraisal baseline learn separable
fixtures; the appraisal baseline refuses missing ratings by name instead of inventing them."""

import random

import pytest

from nsmcore.baselines import (
    APPRAISALS,
    C_GRID,
    BaselineError,
    appraisal_matrix,
    train_appraisal_baseline,
    train_label_classifier,
)

SCENES = [
    "at the beach",
    "with my sister",
    "at work on monday",
    "in the park",
    "on the train home",
    "at my cousin's house",
    "after school",
    "in the supermarket",
    # held out
    "at the football match",
    "during the holidays",
]
CUES = {
    "joy": "it was a wonderful and lovely day {s}",
    "fear": "I was terrified of the dark alley {s}",
    "anger": "someone cheated me and lied to my face {s}",
}


def label_examples(scenes):
    return [(template.format(s=s), label) for s in scenes for label, template in CUES.items()]


def test_the_label_classifier_learns_a_separable_fixture():
    train = label_examples(SCENES[:8])
    model = train_label_classifier([t for t, _ in train], [label for _, label in train], seed=0)
    held_out = label_examples(SCENES[8:])
    assert model.predict([t for t, _ in held_out]) == [label for _, label in held_out]
    assert model.predict([]) == []


def test_one_training_label_is_always_predicted():
    model = train_label_classifier(["a", "b c"], ["joy", "joy"])
    assert model.predict(["anything at all"]) == ["joy"]


def test_the_label_classifier_refuses_mismatched_or_empty_input():
    with pytest.raises(BaselineError, match="2 inputs but 1 labels"):
        train_label_classifier(["a", "b"], ["joy"])
    with pytest.raises(BaselineError, match="item 2: the text is empty"):
        train_label_classifier(["a", " "], ["joy", "fear"])


def ratings_for(label, rng):
    """Noisy 1-5 ratings where pleasantness separates joy, other_responsblt separates anger."""
    row = {name: rng.randint(1, 5) for name in APPRAISALS}
    row["pleasantness"] = 5 if label == "joy" else 1
    row["other_responsblt"] = 5 if label == "anger" else 1
    return row


def test_the_appraisal_baseline_learns_a_separable_fixture():
    rng = random.Random(7)
    labels = ["joy", "anger", "sadness"] * 30
    model = train_appraisal_baseline([ratings_for(label, rng) for label in labels], labels, seed=0)
    held_labels = ["joy", "anger", "sadness"] * 10
    predicted = model.predict([ratings_for(label, rng) for label in held_labels])
    assert predicted == held_labels


def test_a_missing_or_non_numeric_rating_is_named_not_imputed():
    rng = random.Random(0)
    good = [ratings_for("joy", rng), ratings_for("anger", rng)]
    missing = {k: v for k, v in good[1].items() if k not in ("urgency", "effort")}
    with pytest.raises(BaselineError, match=r"item 2: missing appraisal rating\(s\) urgency, effort"):
        train_appraisal_baseline([good[0], missing], ["joy", "anger"])
    with pytest.raises(BaselineError, match="item 1: appraisal suddenness = 'high' is not a number"):
        train_appraisal_baseline([{**good[0], "suddenness": "high"}, good[1]], ["joy", "anger"])
    model = train_appraisal_baseline(good, ["joy", "anger"])
    with pytest.raises(BaselineError, match="item 1: missing appraisal rating"):
        model.predict([{}])


def test_the_appraisal_baselines_c_is_chosen_on_training_folds_and_recorded():
    # issue 26: C=1 was fixed and undocumented; it is now chosen by an inner cross-validation
    # over C_GRID on the training items and recorded with how it was chosen
    rng = random.Random(3)
    labels = ["joy", "anger", "sadness"] * 20
    ratings = [ratings_for(label, rng) for label in labels]
    model = train_appraisal_baseline(ratings, labels, seed=0)
    assert model.C in C_GRID
    assert model.chosen.startswith(f"C={model.C:g}, chosen by 5-fold cross-validation (log-loss) within the")
    # the search is GridSearchCV's: the same choice as scikit-learn's own on the same folds
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    matrix = StandardScaler().fit_transform(appraisal_matrix(ratings))
    estimator = LogisticRegression(class_weight="balanced", max_iter=2000, solver="newton-cg", random_state=0)
    search = GridSearchCV(
        estimator,
        {"C": list(C_GRID)},
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
        scoring="neg_log_loss",
    )
    assert search.fit(matrix, labels).best_params_["C"] == model.C
    given = train_appraisal_baseline(ratings, labels, C=0.3)
    assert (given.C, given.chosen) == (0.3, "C=0.3, given")
    few = train_appraisal_baseline(ratings[:4], labels[:4])  # one sadness item: no folds
    assert few.C == 1.0 and "too few items" in few.chosen
