"""python -m nsmcore train-classifier, and parse --backend classifier with its folder."""

import json
import re

import pytest

from tests.nsmcore.test_classifier import HELD_OUT, TRAIN
from tests.nsmcore.test_cli import jsonl, run


def gold_lines(examples, nested=False):
    if nested:
        return [{"text": t, "explication": {**s, "residue": ""}} for t, s in examples]
    return [{"text": t, **s, "notes": ""} for t, s in examples]


@pytest.mark.parametrize("nested", [False, True])
def test_train_then_parse_with_the_folder(tmp_path, nested):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl(*gold_lines(TRAIN, nested)))
    folder = tmp_path / "model"
    code, out, err = run(
        [
            "train-classifier",
            "--input",
            str(gold),
            "--out",
            str(folder),
            "--seed",
            "3",
            "--decoding",
            "argmax",
        ]
    )
    assert code == 0, err
    assert f"trained on {len(TRAIN)} examples" in out and "experiencer" in out  # one value only
    card = json.loads((folder / "card.json").read_text())
    assert card["seed"] == 3 and card["sizes"]["examples"] == len(TRAIN)
    assert card["meta"]["input"] == str(gold)

    texts = jsonl(*({"id": k, "text": t} for k, (t, _) in enumerate(HELD_OUT)))
    code, out, err = run(["parse", "--backend", "classifier", "--model", str(folder)], texts)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in records] == list(range(len(HELD_OUT)))
    assert all(r["legal"] and r["parser"] == f"classifier:{folder}" for r in records)
    assert [r["explication"]["others_know"] for r in records] == [s["others_know"] for _, s in HELD_OUT]


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("{not json", "gold.jsonl:3: malformed JSON"),
        (json.dumps({"text": "hello"}), "gold.jsonl:3: not a legal explication: experiencer: missing"),
        (json.dumps({**gold_lines(TRAIN[:1])[0], "text": ""}), "gold.jsonl:3: no text"),
        (json.dumps({**gold_lines(TRAIN[:1])[0], "body": "maybe"}), "gold.jsonl:3: not a legal .*body"),
        (json.dumps({"text": "x", "explication": None}), "gold.jsonl:3: not a legal explication"),
    ],
)
def test_a_bad_line_exits_2_naming_it_and_writes_nothing(tmp_path, bad_line, message):
    gold = tmp_path / "gold.jsonl"
    lines = [json.dumps(obj) for obj in gold_lines(TRAIN[:2])]
    gold.write_text("\n".join([*lines, bad_line, *lines]) + "\n")
    folder = tmp_path / "model"
    code, out, err = run(["train-classifier", "--input", str(gold), "--out", str(folder)])
    assert code == 2 and out == ""
    assert re.search(message, err), err
    assert not folder.exists()


def test_a_missing_input_or_an_empty_one_exits_2(tmp_path):
    code, _, err = run(["train-classifier", "--input", str(tmp_path / "none.jsonl"), "--out", str(tmp_path)])
    assert code == 2 and "cannot read" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    code, _, err = run(["train-classifier", "--input", str(empty), "--out", str(tmp_path / "m")])
    assert code == 2 and "no examples" in err and not (tmp_path / "m").exists()


def test_parse_with_a_folder_that_is_not_a_model_exits_2_naming_the_setting(tmp_path):
    argv = ["parse", "--backend", "classifier", "--model", str(tmp_path)]
    code, out, err = run(argv, jsonl({"text": "hi"}))
    assert code == 2 and out == ""
    assert "has no card.json" in err and "NSM_PARSER_MODEL" in err


def test_labelled_texts_train_through_the_rules_from_the_cli(tmp_path):
    from tests.nsmcore.test_supervision import HELD_OUT as LABEL_HELD_OUT
    from tests.nsmcore.test_supervision import LABELLED

    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl(*gold_lines(TRAIN)))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(jsonl(*({"text_id": r.id, "text": r.text, "emotion": r.label} for r in LABELLED)))
    folder = tmp_path / "model"
    argv = ["train-classifier", "--input", str(gold), "--out", str(folder), "--labels", str(labels)]
    code, out, err = run([*argv, "--label-weight", "1"])
    assert code == 0, err
    assert f"through the rules on {len(LABELLED)} labelled texts (2 EM rounds)" in out
    card = json.loads((folder / "card.json").read_text())
    assert card["sources"]["labelled"]["texts"] == len(LABELLED)
    assert card["meta"]["labels"] == str(labels) and card["options"]["label_weight"] == 1.0
    texts = jsonl(*({"id": k, "text": t} for k, (t, _) in enumerate(LABEL_HELD_OUT)))
    code, out, err = run(["parse", "--backend", "classifier", "--model", str(folder)], texts)
    assert code == 0, err
    code, routed, err = run(["route"], out)
    assert code == 0, err
    labels_out = [json.loads(line)["label"] for line in routed.splitlines()]
    right = sum(a == b for a, (_, b) in zip(labels_out, LABEL_HELD_OUT, strict=True))
    assert right >= 0.8 * len(LABEL_HELD_OUT)
    # the label head and the confidence floor, both from the command line
    code, out, err = run([*argv, "--label-weight", "0.02", "--iterations", "1", "--label-prior", "5",
                          "--abstain-below", "auto"])  # fmt: skip
    assert code == 0, err
    card = json.loads((folder / "card.json").read_text())
    assert card["options"]["label_prior"] == 5.0 and card["format_version"] == 3
    assert card["sources"]["calibration"]["abstain_below"] == card["options"]["abstain_below"]
    with pytest.raises(SystemExit) as refused:  # argparse's usage error: exit 2, the value named
        run([*argv, "--abstain-below", "often"])
    assert refused.value.code == 2


@pytest.mark.parametrize(
    "line, message",
    [
        ({"text": "a spider"}, "labels.jsonl:2: no label"),
        ({"label": "joy"}, "labels.jsonl:2: no text"),
        ({"text": "a spider", "label": "yuck"}, "labelled text 2: label 'yuck' is not an emotion"),
        ({"text": "a", "label": "joy", "appraisals": [1, 2]}, "labels.jsonl:2: 'appraisals' must be"),
    ],
)
def test_a_bad_labelled_line_exits_2_naming_it(tmp_path, line, message):
    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl(*gold_lines(TRAIN[:4])))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(jsonl({"text": "a rat", "label": "disgust"}, line))
    folder = tmp_path / "model"
    code, out, err = run(
        ["train-classifier", "--input", str(gold), "--out", str(folder), "--labels", str(labels)]
    )
    assert code == 2 and out == ""
    assert message in err
    assert not folder.exists()


def test_the_card_records_the_ids_it_was_trained_on(tmp_path):
    from nsmcore.parsers import trained_item_ids

    gold = tmp_path / "gold.jsonl"
    gold.write_text(jsonl(*({"text_id": f"g{k}", **line} for k, line in enumerate(gold_lines(TRAIN[:6])))))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(jsonl({"id": "L1", "text": "a rat in the bath", "label": "disgust"}))
    folder = tmp_path / "model"
    argv = ["train-classifier", "--input", str(gold), "--out", str(folder), "--labels", str(labels)]
    code, _, err = run(argv)
    assert code == 0, err
    assert trained_item_ids(f"classifier:{folder}") == {f"g{k}" for k in range(6)} | {"L1"}
    assert trained_item_ids("lexical:v1") is None
    assert trained_item_ids(f"classifier:{tmp_path / 'nowhere'}") is None
