"""The classifier parser: learns a slot a cue decides, keeps its output legal, saves with a card
that names its data, loads back to identical predictions, and refuses a bad folder by name."""

import json

import pytest
import sklearn

from nsmcore.mapper import route
from nsmcore.parsers import BACKENDS, ParserUnavailable, make_parser
from nsmcore.parsers.classifier import (
    CARD_FILE,
    MODEL_FILE,
    ClassifierError,
    ClassifierParser,
    data_hash,
    load_classifier,
)
from nsmcore.parsers.classifier_training import train_classifier
from nsmcore.schema import SLOT_NAMES, Explication

EVENTS = [
    "I dropped the tray of drinks at the party",
    "I forgot my lines in the school play",
    "I tripped on the stairs at work",
    "my phone rang during the funeral",
    "I called my teacher mum by mistake",
    "I spilled coffee over my notes in the meeting",
    "I burnt the dinner for my in-laws",
    "I sang the wrong words at the wedding",
    # held out: never seen in training
    "I fell off my bike outside the school gates",
    "I sent the message to the wrong group chat",
]
TRAIN_EVENTS, HELD_OUT_EVENTS = EVENTS[:8], EVENTS[8:]
# The cue decides others_know: shame words and witnesses -> can-know; private frames -> none.
CAN_KNOW = ["{e} and I was so ashamed", "{e} and everyone saw it"]
NONE = ["{e} but nobody was around", "{e} when I was alone"]
# A second, independent cue decides body.
BODY = {"yes": "{t}, my hands were shaking", "no": "{t}"}


def example(template: str, event: str, others_know: str, body: str) -> tuple[str, dict[str, str]]:
    text = BODY[body].format(t=template.format(e=event))
    slots = Explication(
        trigger="something-happened",
        realization="happened",
        evaluation="feel-bad",
        eval_target="self",
        others_know=others_know,
        body=body,
    ).slots()
    return text, slots


def examples_for(events: list[str]) -> list[tuple[str, dict[str, str]]]:
    out = []
    for event in events:
        for body in ("yes", "no"):
            out += [example(t, event, "can-know", body) for t in CAN_KNOW]
            out += [example(t, event, "none", body) for t in NONE]
    return out


TRAIN = examples_for(TRAIN_EVENTS)
HELD_OUT = examples_for(HELD_OUT_EVENTS)


@pytest.fixture(scope="module")
def model():
    return train_classifier(TRAIN, seed=0)


@pytest.fixture(scope="module")
def saved(model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("classifier") / "model"
    model.save(folder, meta={"round": "silver-156", "pass": "A"})
    return folder


def test_the_cue_fixture_is_learned_on_held_out_texts(model):
    predicted = model.predict([text for text, _ in HELD_OUT])
    for (text, gold), (slots, probs) in zip(HELD_OUT, predicted, strict=True):
        assert slots["others_know"] == gold["others_know"], text
        assert slots["body"] == gold["body"], text
        assert 0.5 < probs["others_know"] <= 1.0


def test_a_slot_with_one_training_value_predicts_that_value(model):
    # every training example has experiencer=i and knowledge=none: no classifier, the value itself
    assert model.value_counts["experiencer"] == {"i": len(TRAIN)}
    assert model.slots["knowledge"] == "none"
    slots, probs = model.predict(["Someone else entirely did a thing."])[0]
    assert slots["experiencer"] == "i" and probs["experiencer"] == 1.0


def test_every_output_is_a_legal_explication(model, saved):
    parser = ClassifierParser(str(saved))
    results = parser.parse(["", "xyz", "I was ashamed and shaking", *(t for t, _ in HELD_OUT)])
    assert len(results) == 3 + len(HELD_OUT)
    assert all(r.legal and r.explication is not None for r in results)
    raw = json.loads(results[2].raw_output)
    assert raw["decoding"] == "joint" and set(raw["values"]) == set(SLOT_NAMES)
    assert raw["values"]["others_know"] == results[2].explication.others_know
    assert raw["label"] == route(results[2].explication).label
    assert set(raw["posteriors"]) == set(SLOT_NAMES)
    assert abs(sum(raw["label_mass"].values()) - 1.0) < 1e-3


def test_save_and_load_give_identical_predictions(model, saved):
    texts = [t for t, _ in HELD_OUT] + ["an unrelated sentence about the weather"]
    loaded = load_classifier(saved)
    assert loaded.predict(texts) == model.predict(texts)
    assert loaded.data_hash == model.data_hash and loaded.options == model.options


def test_the_card_names_data_sizes_options_counts_and_versions(model, saved):
    card = json.loads((saved / CARD_FILE).read_text())
    assert card["data_hash"] == data_hash(TRAIN) == model.data_hash
    assert len(card["data_hash"]) == 64
    assert card["sizes"]["examples"] == len(TRAIN) and card["sizes"]["features"] > 100
    assert card["options"]["class_weight"] == "balanced" and card["seed"] == 0
    assert card["value_counts"]["others_know"] == {"can-know": len(TRAIN) // 2, "none": len(TRAIN) // 2}
    assert card["sklearn_version"] == sklearn.__version__
    assert card["created_at"].startswith("20")
    assert card["meta"] == {"round": "silver-156", "pass": "A"}
    assert (saved / MODEL_FILE).is_file()


def test_the_data_hash_follows_the_examples_not_their_spelling():
    text, slots = TRAIN[0]
    assert data_hash(TRAIN) != data_hash(TRAIN[1:])
    changed = [(text, {**slots, "intensity": "very"}), *TRAIN[1:]]
    assert data_hash(changed) != data_hash(TRAIN)
    # an alias of a value is the same example
    someone_did = Explication(trigger="someone-did-something", agency="someone-else").slots()
    assert data_hash([("x", someone_did)]) == data_hash([("x", {**someone_did, "trigger": "someone-did"})])


def test_the_backend_is_registered_and_names_its_folder_and_data(saved, model):
    assert "classifier" in BACKENDS
    parser = make_parser("classifier", model=str(saved))
    assert parser.backend == "classifier"
    assert parser.name == f"classifier:{saved}"
    assert model.data_hash[:12] in parser.version
    text = HELD_OUT[0][0]
    assert parser.parse_one(text).explication.slots() == model.decode([text])[0].values


@pytest.mark.parametrize("model_option", ["", None])
def test_no_model_folder_names_the_setting(model_option):
    with pytest.raises(ParserUnavailable, match="NSM_PARSER_MODEL"):
        make_parser("classifier", model=model_option)


def test_a_missing_folder_or_one_without_a_card_is_unavailable(tmp_path):
    with pytest.raises(ParserUnavailable, match=r"no model folder at .*nowhere.*NSM_PARSER_MODEL"):
        ClassifierParser(str(tmp_path / "nowhere"))
    with pytest.raises(ParserUnavailable, match=r"has no card\.json"):
        ClassifierParser(str(tmp_path))


def test_a_damaged_model_file_or_another_sklearn_version_is_refused(model, tmp_path):
    folder = model.save(tmp_path / "m")
    (folder / MODEL_FILE).write_bytes((folder / MODEL_FILE).read_bytes()[:100])
    with pytest.raises(ParserUnavailable, match="does not match the sha256"):
        ClassifierParser(str(folder))
    folder = model.save(tmp_path / "m")  # overwrites the damaged folder whole
    ClassifierParser(str(folder))
    card = json.loads((folder / CARD_FILE).read_text())
    (folder / CARD_FILE).write_text(json.dumps({**card, "sklearn_version": "0.1"}))
    with pytest.raises(ParserUnavailable, match=r"scikit-learn 0\.1.*retrain"):
        ClassifierParser(str(folder))
    (folder / CARD_FILE).write_text("{not json")
    with pytest.raises(ParserUnavailable, match="unreadable card"):
        ClassifierParser(str(folder))


def test_bad_training_data_is_refused_naming_the_example():
    with pytest.raises(ClassifierError, match=r"example 2: .*others_know.*'maybe'"):
        train_classifier([TRAIN[0], (TRAIN[1][0], {**TRAIN[1][1], "others_know": "maybe"})])
    with pytest.raises(ClassifierError, match="example 1: the text is empty"):
        train_classifier([("  ", TRAIN[0][1])])
    with pytest.raises(ClassifierError, match="no training examples"):
        train_classifier([])
    with pytest.raises(ClassifierError, match=r"unknown option.*alpha"):
        train_classifier(TRAIN, alpha=1)


def test_training_is_deterministic_for_a_seed(model):
    again = train_classifier(TRAIN, seed=0)
    texts = [t for t, _ in HELD_OUT]
    assert again.predict(texts) == model.predict(texts)
    assert again.options_hash == model.options_hash
