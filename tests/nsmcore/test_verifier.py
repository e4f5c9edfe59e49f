"""The NLI verifier on tiny random pair classifiers built here, with the entailment label at
different indexes: the index comes from config.id2label, batching changes nothing, results are
cached by model, revision, text and line."""

import pytest

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")

from nsmcore.tiny import build_tiny_nli
from nsmcore.verifier import LineScore, Verifier, VerifierUnavailable, item_score, label_indexes

PAIRS = [
    ("I was so happy when I passed my driving test.", "I feel something good because of this"),
    ("My grandmother died last spring.", "something bad happened"),
    ("Someone stole my bike.", "someone else did something"),
    ("I was nervous before the exam tomorrow.", "I don't know what will happen"),
    ("It rained.", "I did something"),
]


@pytest.fixture(scope="module", params=[
    ("entailment", "neutral", "contradiction"),
    ("contradiction", "entailment", "neutral"),
    ("CONTRADICTION", "NEUTRAL", "ENTAILMENT"),
])  # fmt: skip
def nli(request, tmp_path_factory):
    labels = request.param
    path = build_tiny_nli(tmp_path_factory.mktemp("nli"), labels=labels, seed=5)
    return labels, Verifier(str(path), device="cpu", batch_size=4)


def test_the_entailment_index_is_read_from_id2label(nli):
    labels, verifier = nli
    assert verifier.entail == [label.lower() for label in labels].index("entailment")
    assert verifier.contradict == [label.lower() for label in labels].index("contradiction")
    scores = verifier.score(PAIRS)
    for s in scores:
        assert s.p_entailment + s.p_neutral + s.p_contradiction == pytest.approx(1.0, abs=1e-5)


def test_the_probabilities_follow_the_labels_not_the_positions(tmp_path):
    """The same weights with the labels listed in another order: p(entailment) must follow."""
    from transformers import AutoModelForSequenceClassification

    a = build_tiny_nli(tmp_path / "a", labels=("entailment", "neutral", "contradiction"), seed=9)
    model = AutoModelForSequenceClassification.from_pretrained(a)
    model.config.id2label = {0: "contradiction", 1: "neutral", 2: "entailment"}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    model.save_pretrained(tmp_path / "b")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / "b" / name).write_bytes((a / name).read_bytes())
    first = Verifier(str(a), device="cpu").score(PAIRS)
    second = Verifier(str(tmp_path / "b"), device="cpu").score(PAIRS)
    for x, y in zip(first, second, strict=True):
        assert y.p_entailment == pytest.approx(x.p_contradiction, abs=1e-6)
        assert y.p_contradiction == pytest.approx(x.p_entailment, abs=1e-6)


def test_batched_scores_equal_one_pair_at_a_time(nli):
    _, verifier = nli
    single = Verifier(verifier.model_id, device="cpu", batch_size=1)
    batched = verifier.score(PAIRS)
    alone = single.score(PAIRS)
    for x, y in zip(batched, alone, strict=True):
        assert x.p_entailment == pytest.approx(y.p_entailment, abs=1e-5)
    assert single.forward_passes == len(PAIRS)


class DictCache:
    def __init__(self):
        self.data = {}

    def get_many(self, keys):
        return {k: self.data[k] for k in keys if k in self.data}

    def set_many(self, scores):
        self.data.update(scores)


def test_a_cache_makes_verifying_again_cost_nothing(nli):
    _, verifier = nli
    cache = DictCache()
    first = verifier.score(PAIRS, cache=cache)
    passes = verifier.forward_passes
    again = verifier.score(PAIRS, cache=cache)
    assert verifier.forward_passes == passes
    assert again == first
    model, text, line = next(iter(cache.data))
    assert model == f"{verifier.model_id}@{verifier.revision}" and len(text) == 64
    assert line in {hypothesis for _, hypothesis in PAIRS}


def test_a_model_without_an_entailment_label_is_refused(tmp_path):
    path = build_tiny_nli(tmp_path / "sentiment", labels=("negative", "positive"))
    with pytest.raises(VerifierUnavailable, match="no entailment label"):
        Verifier(str(path), device="cpu")
    with pytest.raises(VerifierUnavailable, match="no model folder at /no/such/nli"):
        Verifier("/no/such/nli")
    with pytest.raises(VerifierUnavailable, match="two labels read as entail"):
        label_indexes({0: "entailment", 1: "ENTAILED"})


def test_item_score_is_the_share_of_entailed_lines():
    scores = [LineScore(0.9, 0.05, 0.05), LineScore(0.4, 0.3, 0.3), LineScore(0.5, 0.25, 0.25)]
    assert item_score(scores) == pytest.approx(2 / 3)
    assert item_score(scores, threshold=0.95) == 0.0
    assert item_score([]) is None
