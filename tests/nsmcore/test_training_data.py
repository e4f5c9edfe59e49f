"""Training data: held-out items refused (named), the prompt format is exactly what the
transformers backend scores, the chat format is what the openai backend sends, and every file is
written with its manifest."""

import json

import pytest

from nsmcore.parsers.prompt import PROMPT_VERSION, chat_messages, slot_prompt
from nsmcore.render import RENDERER_VERSION
from nsmcore.schema import SLOT_NAMES
from nsmcore.training_data import (
    TrainingDataError,
    chat_rows,
    data_hash,
    manifest_path,
    prompt_rows,
    read_prompt_rows,
    training_records,
    write_training,
)
from tests.explications import PRED as PRIDE

GUILT = {**PRIDE, "evaluation": "feel-bad"}


def pairs():
    return [
        {"id": "t2", "text": "I broke my friend's vase.", "explication": GUILT},
        {"id": "t1", "text": "I got the management position.", "explication": PRIDE, "source": "gold"},
    ]


def test_records_are_checked_and_ordered():
    records = training_records(pairs(), tiers_of={"t1": "gold", "t2": {"gold", "H"}})
    assert [r.id for r in records] == ["t1", "t2"]
    assert records[1].slots == {name: GUILT[name] for name in SLOT_NAMES}


def test_eval_tier_items_are_refused_with_their_ids():
    expected = r"2 held-out \(eval tier\) items cannot be training data: t1, t2"
    with pytest.raises(TrainingDataError, match=expected):
        training_records(pairs(), tiers_of={"t1": ["gold", "eval"], "t2": "eval"})


def test_an_illegal_explication_and_an_empty_scope_are_named():
    bad = [{"id": "t9", "text": "x", "explication": {**PRIDE, "body": "maybe"}}]
    with pytest.raises(TrainingDataError, match=r"item t9: .*body"):
        training_records(bad, tiers_of={})
    with pytest.raises(TrainingDataError, match="no training data"):
        training_records([], tiers_of={})


def test_prompt_rows_are_the_decoders_prompts_slot_by_slot():
    record = training_records(pairs(), tiers_of={})[0]
    rows = prompt_rows([record])
    assert [r["slot"] for r in rows] == list(SLOT_NAMES)
    chosen = {}
    for row, name in zip(rows, SLOT_NAMES, strict=True):
        assert row["prompt"] == slot_prompt(record.text, chosen)
        assert row["completion"] == f" {PRIDE[name]}\n"
        chosen[name] = PRIDE[name]


def test_chat_rows_are_the_openai_messages_with_the_explication_as_reply():
    record = training_records(pairs(), tiers_of={})[0]
    (row,) = chat_rows([record])
    assert row["messages"][:2] == chat_messages(record.text, with_schema=True)
    reply = row["messages"][2]
    assert reply["role"] == "assistant"
    assert json.loads(reply["content"]) == {name: PRIDE[name] for name in SLOT_NAMES}


def test_files_are_written_with_a_manifest_and_the_hash_does_not_depend_on_the_format(tmp_path):
    records = training_records(pairs(), tiers_of={})
    meta = {"rule_set_version": "1", "item_sets": [{"id": 3, "name": "gold-98", "tier": "gold"}]}
    prompt = write_training(records, tmp_path / "p.jsonl", "prompt", meta=meta)
    chat = write_training(records, tmp_path / "c.jsonl", "chat", meta=meta)
    assert prompt["data_sha256"] == chat["data_sha256"] == data_hash(records)
    assert prompt["file_sha256"] != chat["file_sha256"]
    assert (prompt["lines"], chat["lines"], prompt["items"]) == (24, 2, 2)
    on_disk = json.loads(manifest_path(tmp_path / "p.jsonl").read_text())
    assert on_disk == prompt
    assert on_disk["item_sets"] == meta["item_sets"] and on_disk["rule_set_version"] == "1"
    assert (on_disk["renderer_version"], on_disk["prompt_version"]) == (RENDERER_VERSION, PROMPT_VERSION)
    rows = read_prompt_rows(tmp_path / "p.jsonl")
    assert rows == prompt_rows(records)
    changed = training_records([{**pairs()[0], "text": "I broke a vase."}], tiers_of={})
    assert data_hash(changed) != data_hash(records[1:])


def test_a_file_that_is_not_prompt_format_is_named(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"prompt": "a", "completion": " b\\n"}\n{"messages": []}\n')
    with pytest.raises(TrainingDataError, match="line 2: a prompt-format line"):
        read_prompt_rows(path)
