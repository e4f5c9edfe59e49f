"""Tiny random models built locally, for tests, benchmarks and smoke runs without a download.

Their weights are random, so their outputs mean nothing; what they exercise is the real loading
code (``from_pretrained`` on a local path), tokenisation, batching and scoring. The tokenizer is a
byte-level BPE trained on the parser's own instruction prompt, so prompts stay short.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nsmcore.parsers.prompt import slot_prefix, slot_suffix
from nsmcore.render import render
from nsmcore.schema import SLOTS, Explication


def _tokenizer(corpus: list[str], vocab_size: int):  # -> PreTrainedTokenizerFast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")


def build_tiny_causal_lm(path: str | Path, *, seed: int = 0, hidden_size: int = 32, layers: int = 2) -> Path:
    """A random Llama with a few thousand parameters per layer, saved with its tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = Path(path)
    corpus = [slot_prefix(), slot_suffix("I was happy when I got the job.", {})]
    corpus += [f"{slot.name}: {value}\n" for slot in SLOTS for value in slot.values]
    tokenizer = _tokenizer(corpus, vocab_size=1200)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_nli(
    path: str | Path,
    *,
    labels: tuple[str, ...] = ("entailment", "neutral", "contradiction"),
    seed: int = 0,
    hidden_size: int = 32,
    layers: int = 2,
    texts: Iterable[str] = (),
    vocab_size: int = 600,
) -> Path:
    """A random BERT pair classifier whose ``config.id2label`` lists ``labels`` in that order (put
    the entailment label anywhere, or leave it out, to test the verifier's reading of it). Its
    tokenizer learns its vocabulary from the rendered lines and ``texts``: give it texts like
    those it will read (and a larger ``vocab_size``) for sequence lengths like a real model's."""
    import torch
    from tokenizers import processors
    from transformers import BertConfig, BertForSequenceClassification

    path = Path(path)
    corpus = ["I was happy when I got the job.", "My dog died and I cried for days.", *texts]
    corpus += [
        line.text for slot in SLOTS for v in slot.values for line in render(Explication(**{slot.name: v}))
    ]
    tokenizer = _tokenizer(corpus, vocab_size=vocab_size)
    backend = tokenizer.backend_tokenizer
    cls_id, sep_id = backend.token_to_id("<s>"), backend.token_to_id("</s>")
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> $B:1 </s>:1",
        special_tokens=[("<s>", cls_id), ("</s>", sep_id)],
    )
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        intermediate_size=hidden_size * 2,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: k for k, label in enumerate(labels)},
    )
    torch.manual_seed(seed)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
