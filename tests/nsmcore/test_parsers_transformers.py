"""The transformers backend on a tiny random Llama built here (no download): legal by
construction, batching changes nothing but the number of forward passes, scores are the mean
log-likelihood of each value."""

import json

import pytest

torch = pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")

from nsmcore.parsers import ParserUnavailable, make_parser  # noqa: E402
from nsmcore.parsers.prompt import slot_prompt  # noqa: E402
from nsmcore.parsers.transformers_lm import TransformersParser  # noqa: E402
from nsmcore.schema import SLOTS  # noqa: E402
from nsmcore.tiny import build_tiny_causal_lm  # noqa: E402

TEXTS = [
    "I got the job I had wanted for years.",
    "My grandmother died and I could not say goodbye.",
    "Someone scratched my car and left.",
    "I am nervous about the exam tomorrow.",
    "The soup smelled rotten.",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-llama"), seed=3)


@pytest.fixture(scope="module")
def batched(model_dir):
    return TransformersParser(str(model_dir), device="cpu", batch_size=8)


def test_every_output_is_legal_and_names_the_model(batched, model_dir):
    results = batched.parse(TEXTS)
    assert len(results) == len(TEXTS)
    assert all(r.legal for r in results)
    assert batched.name == f"transformers:{model_dir}"
    assert batched.version.startswith("local-")


def test_batched_and_one_candidate_at_a_time_give_the_same_scores(batched, model_dir):
    naive = TransformersParser(str(model_dir), device="cpu", batch_size=1, max_rows=1, strategy="naive")
    batched.parse(TEXTS[:1])  # the shared prompt prefix is encoded once per parser; count after it
    before = batched.forward_passes
    fast, slow = batched.parse(TEXTS), naive.parse(TEXTS)
    assert [r.explication for r in fast] == [r.explication for r in slow]
    for a, b in zip(fast, slow, strict=True):
        scores_a, scores_b = (
            json.loads(a.raw_output)["mean_logprob"],
            json.loads(b.raw_output)["mean_logprob"],
        )
        for slot in scores_a:
            assert scores_a[slot] == pytest.approx(scores_b[slot], abs=2e-3), slot
    # two passes per slot for the whole batch (one where every value is a single token), against
    # one pass per candidate value (42 per text) plus the one over the shared prefix
    assert 12 <= batched.forward_passes - before <= 24
    assert naive.forward_passes == 42 * len(TEXTS) + 1


def test_max_rows_splits_a_batch_without_changing_the_result(batched, model_dir):
    small = TransformersParser(str(model_dir), device="cpu", batch_size=8, max_rows=7)
    assert [r.explication for r in small.parse(TEXTS)] == [r.explication for r in batched.parse(TEXTS)]


def test_an_unknown_strategy_is_named(model_dir):
    with pytest.raises(ParserUnavailable, match="unknown strategy 'fast'"):
        TransformersParser(str(model_dir), strategy="fast")


def test_the_prefix_cache_gives_the_same_scores_as_reading_everything(batched):
    tok = batched.tokenizer
    suffix = tok("Text: I won.\n\nExplication:\nexperiencer:", add_special_tokens=False)["input_ids"]
    rows = [suffix + ids for ids in batched._value_ids["experiencer"]]
    lengths = [len(ids) for ids in batched._value_ids["experiencer"]]
    cached = batched.score_rows(rows, lengths, use_prefix_cache=True)
    full = batched.score_rows(rows, lengths, use_prefix_cache=False)
    assert cached == pytest.approx(full, abs=1e-4)


def test_the_chosen_value_has_the_highest_mean_log_likelihood(model_dir):
    """An independent computation, one unpadded sequence at a time, without the cache."""
    greedy = TransformersParser(str(model_dir), device="cpu", decoding="greedy")
    text = TEXTS[0]
    result = greedy.parse_one(text)
    batched = greedy
    tok, model = batched.tokenizer, batched.model
    chosen = {}
    for slot in SLOTS[:3]:
        prompt = tok(slot_prompt(text, chosen), add_special_tokens=True)["input_ids"]
        means = {}
        for value in slot.values:
            cont = tok(f" {value}\n", add_special_tokens=False)["input_ids"]
            ids = torch.tensor([prompt + cont])
            with torch.inference_mode():
                logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
            means[value] = float(
                sum(logprobs[len(prompt) - 1 + k, t] for k, t in enumerate(cont)) / len(cont)
            )
        chosen[slot.name] = max(means, key=means.get)
        assert getattr(result.explication, slot.name) == chosen[slot.name], slot.name


def test_a_missing_model_path_is_refused_with_the_path_named(tmp_path):
    with pytest.raises(ParserUnavailable, match="no model folder at /no/such/model"):
        make_parser("transformers", model="/no/such/model")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ParserUnavailable, match="cannot load the causal LM"):
        make_parser("transformers", model=str(empty))
    with pytest.raises(ParserUnavailable, match="no model given"):
        make_parser("transformers")


def test_an_over_long_text_loses_its_start_and_still_gives_a_legal_result(model_dir):
    parser = TransformersParser(str(model_dir), device="cpu")
    parser.max_length = len(parser._prefix_ids) + 80  # as if the model read few tokens
    long_text = "I waited and waited. " * 60
    assert parser.parse_one(long_text).legal


def test_joint_decoding_is_the_likeliest_routed_explication_of_its_own_slot_scores(batched, model_dir):
    import numpy as np

    from nsmcore.decoding import rules_tag
    from nsmcore.mapper import ABSTAIN, load_rule_set, route, route_codes
    from nsmcore.space import all_codes

    greedy = TransformersParser(str(model_dir), device="cpu", decoding="greedy")
    codes = all_codes()
    winners, _ = route_codes(codes, load_rule_set())
    codes = codes.astype(np.int64)
    for text, joint, plain in zip(TEXTS, batched.parse(TEXTS), greedy.parse(TEXTS), strict=True):
        raw = json.loads(joint.raw_output)
        assert raw["decoding"] == "joint" and raw["greedy"] == plain.explication.slots(), text
        # the slot scores as per-slot distributions; brute force over all 1,866,240 assignments
        logp = []
        for slot in SLOTS:
            row = np.array([raw["mean_logprob"][slot.name][v] for v in slot.values])
            logp.append(row - np.logaddexp.reduce(row))
        total = sum(logp[s][codes[:, s]] for s in range(len(SLOTS)))
        best = int(np.argmax(np.where(winners >= 0, total, -np.inf)))
        expected = {slot.name: slot.values[codes[best, s]] for s, slot in enumerate(SLOTS)}
        assert joint.explication.slots() == expected, text
        assert raw["label"] == route(expected).label != ABSTAIN
        assert sum(raw["label_mass"].values()) == pytest.approx(1.0, abs=1e-3)
    assert batched.version.endswith(f"-joint-{rules_tag()}") and "-joint" not in greedy.version
    with pytest.raises(ParserUnavailable, match="unknown decoding 'beam'"):
        TransformersParser(str(model_dir), decoding="beam")
