"""Training through the rules and from appraisals: labelled texts teach the classifier parser
explications that route to their labels, including slot values no gold explication shows; the
appraisal mapping gives exactly its documented evidence; the card names what trained the model;
bad labelled texts and options are refused by name."""

import json

import numpy as np
import pytest

from nsmcore.decoding import choose_gap
from nsmcore.mapper import route
from nsmcore.parsers.classifier import ClassifierError, ClassifierParser, load_classifier
from nsmcore.parsers.classifier_training import train_classifier
from nsmcore.parsers.supervision import (
    APPRAISAL_EVIDENCE,
    LabelledText,
    appraisal_factors,
    appraisal_log_evidence,
)
from nsmcore.schema import SLOTS, Explication
from tests.nsmcore.test_classifier import TRAIN

CREATURES = ["spider", "cockroach", "rat", "slug", "maggot", "centipede", "leech", "worm"]
PLACES = ["bath", "kitchen", "bed", "shoe", "sink", "lunch box", "car", "garden shed"]
PETS = ["cat", "dog", "hamster", "goldfish", "rabbit", "parrot", "tortoise", "pony"]


def disgust_texts(creatures, places):
    return [f"I found a {c} in my {p}" for c in creatures for p in places]


def sadness_texts(pets):
    return [f"my old {p} died last {d}" for p in pets for d in ("week", "month", "winter")]


LABELLED = [
    LabelledText(t, "disgust", id=f"d{k}") for k, t in enumerate(disgust_texts(CREATURES[:6], PLACES))
] + [LabelledText(t, "sadness", id=f"s{k}") for k, t in enumerate(sadness_texts(PETS[:6]))]
HELD_OUT = [(t, "disgust") for t in disgust_texts(CREATURES[6:], PLACES[:3])] + [
    (t, "sadness") for t in sadness_texts(PETS[6:])
]


@pytest.fixture(scope="module")
def gold_only():
    return train_classifier(TRAIN, seed=0)


@pytest.fixture(scope="module")
def through_rules():
    return train_classifier(TRAIN, seed=0, labelled=LABELLED, iterations=2, label_weight=1.0)


def routed_right(model):
    decoded = model.decode([t for t, _ in HELD_OUT])
    return sum(d.label == label for d, (_, label) in zip(decoded, HELD_OUT, strict=True))


def test_labels_teach_explications_that_route_to_them(gold_only, through_rules):
    # the gold pairs never show body=yes or realization=not-can: no gold-only explication is disgust
    # or sadness; through the rules the held-out texts of both kinds route to their labels
    assert routed_right(gold_only) == 0
    assert routed_right(through_rules) >= 0.8 * len(HELD_OUT)
    spider = through_rules.decode(["I found a leech in my kitchen"])[0]
    assert spider.values["body"] == "yes" and spider.values["want"] == "not-want"
    assert route(spider.values).label == "disgust"


def test_the_gold_slots_are_still_learned_beside_the_labels(through_rules):
    # the gold fixture's others_know cue survives training on labelled texts
    texts = [t for t, _ in TRAIN]
    predicted = [slots for slots, _ in through_rules.predict(texts)]
    agree = np.mean(
        [p["others_know"] == g["others_know"] for p, (_, g) in zip(predicted, TRAIN, strict=True)]
    )
    assert agree >= 0.9


def test_the_card_names_the_labelled_texts_and_the_rule_set(through_rules, tmp_path):
    through_rules.save(tmp_path / "m")
    card = json.loads((tmp_path / "m" / "card.json").read_text())
    labelled = card["sources"]["labelled"]
    assert labelled["texts"] == len(LABELLED)
    assert labelled["labels"] == {"disgust": 48, "sadness": 18}
    assert labelled["ids"] == sorted(r.id for r in LABELLED)
    assert labelled["rule_set_version"] == "1" and len(labelled["sha256"]) == 64
    assert card["options"]["iterations"] == 2 and card["options"]["label_weight"] == 1.0
    loaded = load_classifier(tmp_path / "m")
    texts = [t for t, _ in HELD_OUT]
    assert [d.values for d in loaded.decode(texts)] == [d.values for d in through_rules.decode(texts)]
    parsed = ClassifierParser(str(tmp_path / "m")).parse(texts[:2])
    assert [r.explication.slots() for r in parsed] == [d.values for d in through_rules.decode(texts[:2])]


def test_each_appraisal_rule_gives_its_factor_and_only_when_all_its_conditions_hold():
    for slot, value, factor, conditions in APPRAISAL_EVIDENCE:
        met = {rating: cut for rating, _, cut in conditions}
        assert appraisal_factors(met)[slot][value] == pytest.approx(factor)
        for rating, op, cut in conditions:
            missed = {**met, rating: cut - 1 if op == ">=" else cut + 1}
            assert appraisal_factors(missed).get(slot, {}).get(value, 1.0) == 1.0, (slot, value, rating)
    assert appraisal_factors({"self_responsblt": 5})["agency"] == {"i": 2.0}
    assert appraisal_factors({"self_responsblt": 5}, weight=2.0)["agency"] == {"i": 4.0}
    assert appraisal_factors({"self_responsblt": 5}, weight=0) == {}
    assert appraisal_factors({"self_responsblt": "n/a", "other_responsblt": None}) == {}


def test_appraisal_evidence_is_a_log_factor_per_slot_and_value():
    evidence = appraisal_log_evidence([{"self_responsblt": 5, "other_responsblt": 1}, {}])
    agency = SLOTS[2]
    assert agency.name == "agency"
    assert evidence[2][0, agency.values.index("i")] == pytest.approx(np.log(2.0))
    assert evidence[2][0, agency.values.index("someone-else")] == 0.0
    assert not any(e[1].any() for e in evidence)  # no ratings, no evidence


def test_bad_labelled_texts_and_options_are_refused_by_name():
    with pytest.raises(ClassifierError, match="labelled text 2: label 'happy' is not an emotion"):
        train_classifier(TRAIN, labelled=[LabelledText("a", "joy"), LabelledText("b", "happy")])
    with pytest.raises(ClassifierError, match="labelled text 1: the text is empty"):
        train_classifier(TRAIN, labelled=[LabelledText("  ", "joy")])
    with pytest.raises(ClassifierError, match="option label_trust must be a number from"):
        train_classifier(TRAIN, label_trust=0)
    with pytest.raises(ClassifierError, match="option decoding must be 'joint' or 'argmax'"):
        train_classifier(TRAIN, decoding="beam")
    with pytest.raises(ClassifierError, match="option iterations must be a whole number"):
        train_classifier(TRAIN, iterations=2.5)


def test_progress_is_reported_per_fit():
    steps = []
    train_classifier(TRAIN[:8], labelled=LABELLED[:6], iterations=2, progress=lambda *a: steps.append(a[:2]))
    assert steps == [(1, 3), (2, 3), (3, 3)]


def test_a_prediction_keeps_its_label_distribution_and_posteriors(through_rules, tmp_path):
    through_rules.save(tmp_path / "m")
    result = ClassifierParser(str(tmp_path / "m")).parse_one("I found a leech in my bed")
    decoded = result.extra["decoded"]
    assert decoded["label"] == route(result.explication).label
    assert max(decoded["label_mass"], key=decoded["label_mass"].get) == "disgust"
    assert decoded["posteriors"]["body"]["yes"] > 0.5
    assert Explication(**result.explication.slots()).body == "yes"


def test_an_auto_gap_is_chosen_on_held_back_labelled_texts_and_recorded(tmp_path):
    from nsmcore.parsers import trained_item_ids

    model = train_classifier(TRAIN, seed=0, labelled=LABELLED, label_weight=1.0, abstain_gap="auto")
    calibration = model.sources["calibration"]
    assert calibration["texts"] == 20 and len(calibration["ids"]) == 20
    assert model.sources["labelled"]["texts"] == len(LABELLED) - 20
    assert not set(calibration["ids"]) & set(model.sources["labelled"]["ids"])
    gap = model.options["abstain_gap"]
    assert calibration["abstain_gap"] == gap
    # the gap is the one choose_gap picks on exactly the held-back texts, decoded without one
    held = [r for r in LABELLED if r.id in set(calibration["ids"])]
    model.options["abstain_gap"] = None
    decoded = model.decode([r.text for r in held])
    chosen = choose_gap(
        [d.gap for d in decoded], [d.label == r.label for d, r in zip(decoded, held, strict=True)]
    )
    assert gap == (None if chosen == float("inf") else round(chosen, 4))
    model.options["abstain_gap"] = gap
    model.save(tmp_path / "m")
    assert trained_item_ids(f"classifier:{tmp_path / 'm'}") == {r.id for r in LABELLED}
    with pytest.raises(ClassifierError, match="'auto' needs at least 40 labelled texts"):
        train_classifier(TRAIN, labelled=LABELLED[:10], abstain_gap="auto")
    with pytest.raises(ClassifierError, match="abstain_gap must be null, 'auto' or a number"):
        train_classifier(TRAIN, abstain_gap="sometimes")


def test_a_label_prior_routes_through_the_rules_while_the_slots_keep_to_gold(tmp_path):
    # one EM round with labels weighing almost nothing: the slots have seen every value the
    # two regions need, but too faintly to route these texts right on their own; the label
    # head, fitted on the labelled texts, chooses the region and the slots follow it
    weak = {"iterations": 1, "label_weight": 0.02}
    plain = train_classifier(TRAIN, seed=0, labelled=LABELLED, **weak)
    prior = train_classifier(TRAIN, seed=0, labelled=LABELLED, label_prior=5.0, **weak)
    assert routed_right(plain) == 0
    assert routed_right(prior) >= 0.8 * len(HELD_OUT)
    assert plain.label_head is None and sorted(prior.label_head.classes_) == ["disgust", "sadness"]
    # the slot scores are the same model's: only the choice of region differs
    texts = [t for t, _ in HELD_OUT]
    for a, b in zip(plain.log_proba(texts), prior.log_proba(texts), strict=True):
        np.testing.assert_allclose(a, b)
    decoded = prior.decode(texts)
    assert all(0 < d.confidence <= 1 for d in decoded)
    # the head is saved with the model and the card says what it is
    prior.save(tmp_path / "m")
    loaded = load_classifier(tmp_path / "m")
    assert loaded.card["format_version"] == 3 and loaded.card["options"]["label_prior"] == 5.0
    assert [d.values for d in loaded.decode(texts)] == [d.values for d in decoded]
    with pytest.raises(ClassifierError, match="option label_prior needs labelled texts"):
        train_classifier(TRAIN, label_prior=1.0)
    with pytest.raises(ClassifierError, match="option label_prior must be a number from 0 to 100"):
        train_classifier(TRAIN, labelled=LABELLED, label_prior=-1)


def test_an_auto_confidence_floor_is_chosen_on_held_back_texts_and_abstains_below_it():
    model = train_classifier(
        TRAIN,
        seed=0,
        labelled=LABELLED,
        iterations=1,
        label_weight=0.02,
        label_prior=1.0,
        abstain_below="auto",
    )
    calibration = model.sources["calibration"]
    below = model.options["abstain_below"]
    assert calibration["abstain_below"] == below and calibration["texts"] == 20
    held = [r for r in LABELLED if r.id in set(calibration["ids"])]
    model.options["abstain_below"] = None
    decoded = model.decode([r.text for r in held])
    chosen = choose_gap(
        [-np.log(d.confidence) for d in decoded],
        [d.label == r.label for d, r in zip(decoded, held, strict=True)],
    )
    assert below == (None if chosen == float("inf") else round(float(np.exp(-chosen)), 4))
    model.options["abstain_below"] = 0.999999  # every label is less sure than that: all abstain
    assert all(d.abstained and d.label == "abstain" for d in model.decode([t for t, _ in HELD_OUT]))
    with pytest.raises(
        ClassifierError, match="abstain_below must be null, 'auto' or a number between 0 and 1"
    ):
        train_classifier(TRAIN, abstain_below=1.5)


def test_a_label_the_head_never_saw_is_neither_favoured_nor_banned_and_one_label_fits_no_head():
    from nsmcore.decoding import rule_lattice
    from nsmcore.parsers.classifier import label_log_proba

    model = train_classifier(TRAIN, seed=0, labelled=LABELLED, label_prior=5.0)  # disgust and sadness only
    labels = rule_lattice().labels
    texts = [t for t, _ in HELD_OUT]
    logp = label_log_proba(model.label_head, model.matrix(texts), labels)
    for k, label in enumerate(labels):
        if label in ("disgust", "sadness"):
            assert (logp[:, k] > np.log(1e-6) - 1e-9).all()
        else:  # what the head gives a label when it cannot tell its two apart: the slots decide
            np.testing.assert_allclose(logp[:, k], np.log(1 / 2))
    assert model.sources["label_head"] == {"labels": ["disgust", "sadness"]}
    # texts whose gold routes to shame (the training fixture) still route there: shame, which no
    # labelled text shows, is not banned (with log 1e-6 times 5 it was: -69 nats, and
    # every one of them went to disgust or sadness)
    shame = [t for t, s in TRAIN if route(s).label == "shame"]
    assert sum(d.label == "shame" for d in model.decode(shame)) >= 0.8 * len(shame)
    one = train_classifier(
        TRAIN, seed=0, labelled=[r for r in LABELLED if r.label == "disgust"], label_prior=5.0
    )
    assert one.label_head is None
    assert one.sources["label_head"] == {"fitted": False, "why": "the labelled texts show one label only"}
    assert len(one.decode(texts)) == len(texts)
