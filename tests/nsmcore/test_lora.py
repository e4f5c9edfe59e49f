"""LoRA fine-tuning on a tiny random Llama built here: the loss goes down, the adapter and its card
are saved, the transformers backend loads base + adapter (and names it), a stopped run resumes
from its checkpoint exactly where it was, and the examples are tokenised as the decoder reads."""

import json
import shutil

import pytest

torch = pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")

from nsmcore.lora import (  # noqa: E402
    CARD,
    LoraError,
    LoraSettings,
    last_checkpoint,
    main,
    tokenize_rows,
    train_lora,
)
from nsmcore.parsers import ParserUnavailable, make_parser  # noqa: E402
from nsmcore.parsers.prompt import slot_prefix, slot_suffix  # noqa: E402
from nsmcore.tiny import build_tiny_causal_lm  # noqa: E402
from nsmcore.training_data import prompt_rows, training_records, write_training  # noqa: E402
from tests.explications import PRED  # noqa: E402

SAD = {**PRED, "trigger": "something-happened", "agency": "none", "realization": "not-can",
       "evaluation": "feel-bad", "eval_target": "event", "intensity": "very"}  # fmt: skip
PAIRS = [
    {"id": "a", "text": "I got the management position.", "explication": PRED},
    {"id": "b", "text": "My dog died last week.", "explication": SAD},
]
# 24 examples, 12 per step: 2 steps an epoch, 10 in all; a high rate so that a few steps show
SETTINGS = LoraSettings(
    rank=8, alpha=16, dropout=0.0, epochs=5, learning_rate=2e-2, batch_size=12, warmup_ratio=0.0,
    checkpoint_every=100, device="cpu",
)  # fmt: skip


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-base"), seed=5)


@pytest.fixture(scope="module")
def records():
    return training_records(PAIRS, tiers_of={})


@pytest.fixture(scope="module")
def trained(base, records, tmp_path_factory):
    out = tmp_path_factory.mktemp("adapter")
    steps = []
    result = train_lora(
        str(base), prompt_rows(records), SETTINGS, out, progress=lambda s, t, losses: steps.append((s, t)),
        data={"data_sha256": "abc"},
    )  # fmt: skip
    return result, steps


def test_the_loss_goes_down_and_the_adapter_is_saved_with_its_card(trained, base):
    result, steps = trained
    assert steps == [(s, 10) for s in range(1, 11)]
    losses = [x for _, x in result.losses]
    assert len(losses) == 10 and not result.stopped
    assert sum(losses[-3:]) / 3 < sum(losses[:3]) / 3 - 0.05
    assert (result.out_dir / "adapter_config.json").is_file()
    assert (result.out_dir / "adapter_model.safetensors").is_file()
    assert not (result.out_dir / "checkpoints").exists()  # finished: the checkpoints go
    card = json.loads((result.out_dir / CARD).read_text())
    assert card["base_model"] == str(base) and card["base_revision"].startswith("local-")
    assert card["settings"]["rank"] == 8 and card["settings"]["learning_rate"] == 2e-2
    assert card["target_modules"] == ["q_proj", "v_proj"]  # peft's default for Llama
    assert card["data"]["data_sha256"] == "abc" and card["data"]["examples"] == 24
    assert card["losses"] == [list(p) for p in result.losses] and card["steps"] == 10
    assert card["versions"]["prompt"] and card["versions"]["peft"]


def test_the_backend_loads_base_plus_adapter_and_names_it(trained, base):
    result, _ = trained
    tuned = make_parser("transformers", model=str(base), adapter=str(result.out_dir), device="cpu")
    plain = make_parser("transformers", model=str(base), device="cpu")
    assert tuned.name == f"transformers:{base}+{result.out_dir}"
    assert tuned.version.startswith(plain.version.split("-p1")[0] + "+a")
    texts = [p["text"] for p in PAIRS]
    assert all(r.legal for r in tuned.parse(texts))

    # the adapter changed the scores the decoder ranks by, and moved them toward the gold values
    def gold_score(parser, text, explication):
        raw = json.loads(parser.parse_one(text).raw_output)["mean_logprob"]
        return sum(raw[slot][explication[slot]] for slot in raw)

    assert gold_score(tuned, PAIRS[1]["text"], SAD) > gold_score(plain, PAIRS[1]["text"], SAD)
    # an adapter folder given as the model: its base comes from its config
    alone = make_parser("transformers", model=str(result.out_dir), device="cpu")
    assert alone.name == tuned.name.replace(str(base), alone.model_source)


def test_a_stopped_run_resumes_from_its_checkpoint_exactly(trained, base, records, tmp_path):
    full, _ = trained
    asked = []

    def stop_after_four() -> bool:
        asked.append(1)
        return len(asked) >= 4

    first = train_lora(str(base), prompt_rows(records), SETTINGS, tmp_path, should_stop=stop_after_four)
    assert first.stopped and first.step == 4 and first.card is None
    assert last_checkpoint(tmp_path).name == "step-0000004"
    assert not (tmp_path / CARD).exists()
    seen = []
    second = train_lora(
        str(base), prompt_rows(records), SETTINGS, tmp_path, progress=lambda s, t, losses: seen.append(s)
    )
    assert seen == list(range(5, 11))  # the step count goes on from the checkpoint
    assert second.step == 10 and not second.stopped
    assert [s for s, _ in second.losses] == list(range(1, 11))
    assert [x for _, x in second.losses] == pytest.approx([x for _, x in full.losses], abs=1e-4)
    # a finished folder is not trained again
    again = train_lora(str(base), prompt_rows(records), SETTINGS, tmp_path)
    assert again.card == second.card


def test_a_checkpoint_of_other_data_is_refused(base, records, tmp_path):
    train_lora(str(base), prompt_rows(records), SETTINGS, tmp_path, should_stop=lambda: True)
    other = prompt_rows(records[:1])
    with pytest.raises(LoraError, match="trained on other data or settings"):
        train_lora(str(base), other, SETTINGS, tmp_path)


def test_examples_are_tokenised_as_the_decoder_reads_them(base, records):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(base)
    rows = prompt_rows(records)
    (ids, n), *_ = tokenize_rows(tokenizer, rows[:1], max_length=4096)
    prefix = tokenizer(slot_prefix(), add_special_tokens=True)["input_ids"]
    suffix = tokenizer(slot_suffix(records[0].text, {}), add_special_tokens=False)["input_ids"]
    value = tokenizer(f" {PRED['experiencer']}\n", add_special_tokens=False)["input_ids"]
    assert ids == prefix + suffix + value and n == len(value)
    # too long: the text loses its start, the prefix and the value stay
    (short, _), *_ = tokenize_rows(tokenizer, rows[:1], max_length=len(prefix) + len(value) + 10)
    assert short[: len(prefix)] == prefix and short[-n:] == value
    assert len(short) == len(prefix) + len(value) + 10


def test_a_missing_base_model_is_named(records, tmp_path):
    with pytest.raises(LoraError, match="no base model given: set the base model"):
        train_lora("", prompt_rows(records), SETTINGS, tmp_path)
    with pytest.raises(LoraError, match="no model folder at /no/such/model"):
        train_lora("/no/such/model", prompt_rows(records), SETTINGS, tmp_path)
    with pytest.raises(LoraError, match="rank: expected an integer from 1 to 1024, got 0"):
        LoraSettings(rank=0)


def test_a_missing_adapter_is_named(base, tmp_path):
    with pytest.raises(ParserUnavailable, match="no LoRA adapter at"):
        make_parser("transformers", model=str(base), adapter=str(tmp_path), device="cpu")


def test_the_module_trains_from_an_exported_file(base, records, tmp_path, capsys):
    data = tmp_path / "train.jsonl"
    write_training(records[:1], data, "prompt", meta={"rule_set_version": "1"})
    merged_dir = str(tmp_path / "merged")
    code = main(["--data", str(data), "--base", str(base), "--out", str(tmp_path / "out"), "--epochs", "1",
                 "--batch-size", "12", "--device", "cpu", "--merge-to", merged_dir])  # fmt: skip
    assert code == 0
    card = json.loads((tmp_path / "out" / CARD).read_text())
    assert card["steps"] == 1 and card["data"]["rule_set_version"] == "1"
    # the merged checkpoint is a plain model that scores as base + adapter does
    merged = make_parser("transformers", model=merged_dir, device="cpu")
    tuned = make_parser("transformers", model=str(base), adapter=str(tmp_path / "out"), device="cpu")
    text = PAIRS[0]["text"]
    a, b = (json.loads(p.parse_one(text).raw_output)["mean_logprob"] for p in (merged, tuned))
    assert a["trigger"] == pytest.approx(b["trigger"], abs=1e-4)
    assert main(["--data", str(data), "--base", "/no/such/model", "--out", str(tmp_path / "x")]) == 2
    assert "no model folder at /no/such/model" in capsys.readouterr().err
    shutil.rmtree(tmp_path / "out")
