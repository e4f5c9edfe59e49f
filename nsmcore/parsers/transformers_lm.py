"""A local causal language model, constrained so that its output is always legal.

For each slot in schema order, the parser scores every allowed value as a continuation of an
instruction prompt (the guidelines' slot and value descriptions, the text, and the slots chosen so
far) and keeps the value with the highest mean token log-likelihood (normalised for length, so a
value of many tokens is not penalised for being long). The output can only be a value from each
slot's set: legality is a property of the decoder, as in the paper's constrained setting.

Batching: all candidates of all texts in a batch, for one slot, go through the model together
(left-padded, with position ids from the attention mask, so that padding does not change any
score). A batch of B texts costs 12 forward passes (more only when ``max_rows`` splits one), where
scoring one candidate at a time costs 42 per text (the sum of the value-set sizes).

Models are loaded with ``from_pretrained`` on a hub name or a local path; no machine here can
download, so tests build tiny random models locally.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nsmcore.parsers.base import Parser, ParseResult, ParserUnavailable, Timer, result_from_object
from nsmcore.parsers.prompt import PROMPT_VERSION, slot_prefix, slot_suffix
from nsmcore.schema import SLOTS


def pick_device(device: str | None) -> str:
    import torch

    if device and device != "auto":
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def model_revision(model: Any, source: str) -> str:
    """The hub commit when known; for a local folder a digest of its config and weight files'
    names and sizes, so that replacing the weights gives a new version."""
    commit = getattr(model.config, "_commit_hash", None)
    if commit:
        return str(commit)[:12]
    path = Path(source)
    if path.is_dir():
        parts = [f"{p.name}:{p.stat().st_size}" for p in sorted(path.iterdir()) if p.is_file()]
        config = (path / "config.json").read_bytes() if (path / "config.json").is_file() else b""
        return "local-" + hashlib.sha256(config + "|".join(parts).encode()).hexdigest()[:12]
    return "unknown"


class TransformersParser(Parser):
    backend = "transformers"

    def __init__(
        self,
        model: str = "",
        *,
        device: str | None = "auto",
        batch_size: int = 8,
        max_rows: int = 256,
        revision: str | None = None,
    ):
        if not model:
            raise ParserUnavailable("no model given: set NSM_PARSER_MODEL to a model name or a local path")
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as error:  # pragma: no cover - both are in requirements.txt
            raise ParserUnavailable(
                f"the transformers backend needs torch and transformers: {error}"
            ) from None
        self._torch = torch
        if model.startswith(("/", "./", "../", "~")) and not Path(model).expanduser().is_dir():
            raise ParserUnavailable(f"cannot load the causal LM: no model folder at {model}")
        self.model_source = model
        self.device = pick_device(device)
        self.batch_size = max(1, batch_size)
        self.max_rows = max(1, max_rows)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, revision=revision)
            dtype = "auto" if self.device.startswith("cuda") else torch.float32
            self.model = AutoModelForCausalLM.from_pretrained(model, revision=revision, dtype=dtype)
        except (OSError, ValueError, ImportError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ParserUnavailable(f"cannot load the causal LM {model!r}: {first}") from None
        try:
            self.model.to(self.device)
        except (RuntimeError, AssertionError) as error:
            raise ParserUnavailable(f"cannot move the model to device {self.device!r}: {error}") from None
        self.model.eval()
        self.tokenizer.padding_side = "left"
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else 0
        self.pad_id = int(pad)
        self.max_length = int(getattr(self.model.config, "max_position_embeddings", 0) or 4096)
        # every value of every slot as token ids, once: " value" and a newline that ends it
        self._value_ids = {
            slot.name: [
                self.tokenizer(f" {value}\n", add_special_tokens=False)["input_ids"] for value in slot.values
            ]
            for slot in SLOTS
        }
        self._revision = model_revision(self.model, model)
        self._prefix_ids: list[int] = self.tokenizer(slot_prefix(), add_special_tokens=True)["input_ids"]
        if len(self._prefix_ids) >= self.max_length - 64:
            raise ParserUnavailable(
                f"the model reads at most {self.max_length} tokens; the instruction alone takes "
                f"{len(self._prefix_ids)}"
            )
        self._cache: Any = None
        #: forward passes so far (the benchmark reports them per item)
        self.forward_passes = 0

    @property
    def name(self) -> str:
        return f"transformers:{self.model_source}"

    @property
    def version(self) -> str:
        return f"{self._revision}-p{PROMPT_VERSION}"

    def parse(self, texts: Sequence[str]) -> list[ParseResult]:
        results: list[ParseResult] = []
        for start in range(0, len(texts), self.batch_size):
            results.extend(self._parse_batch(list(texts[start : start + self.batch_size])))
        return results

    def _parse_batch(self, texts: list[str]) -> list[ParseResult]:
        timer = Timer()
        chosen: list[dict[str, str]] = [{} for _ in texts]
        scores: list[dict[str, dict[str, float]]] = [{} for _ in texts]
        for slot in SLOTS:
            suffixes = [slot_suffix(text, c) for text, c in zip(texts, chosen, strict=True)]
            suffix_ids = self.tokenizer(suffixes, add_special_tokens=False)["input_ids"]
            rows = [
                (i, v, suffix_ids[i] + ids)
                for i in range(len(texts))
                for v, ids in enumerate(self._value_ids[slot.name])
            ]
            lengths = [len(self._value_ids[slot.name][v]) for _, v, _ in rows]
            row_scores = self.score_rows([seq for _, _, seq in rows], lengths)
            for (i, v, _), score in zip(rows, row_scores, strict=True):
                scores[i].setdefault(slot.name, {})[slot.values[v]] = score
            for i in range(len(texts)):
                best = max(slot.values, key=lambda value, i=i: scores[i][slot.name][value])
                chosen[i][slot.name] = best
        seconds = timer.per_item(len(texts))
        return [
            result_from_object(
                dict(c),
                json.dumps(
                    {
                        "chosen": c,
                        "mean_logprob": {s: {v: round(x, 4) for v, x in d.items()} for s, d in sc.items()},
                    },
                    separators=(",", ":"),
                ),
                seconds,
            )
            for c, sc in zip(chosen, scores, strict=True)
        ]

    def score_rows(
        self, rows: list[list[int]], lengths: list[int], *, use_prefix_cache: bool = True
    ) -> list[float]:
        """Mean log-probability of the last ``lengths[r]`` tokens of each row, every row read after
        the shared prefix; ``max_rows`` rows per forward pass."""
        out: list[float] = []
        for start in range(0, len(rows), self.max_rows):
            out.extend(
                self._score_chunk(
                    rows[start : start + self.max_rows],
                    lengths[start : start + self.max_rows],
                    use_prefix_cache,
                )
            )
        return out

    def _prefix_cache(self) -> Any:
        """Keys and values of the shared prefix, computed once: every row of every slot starts with
        it, so each forward pass reads only the text, the chosen slots and the candidate."""
        if self._cache is None:
            torch = self._torch
            ids = torch.tensor([self._prefix_ids], dtype=torch.long, device=self.device)
            with torch.inference_mode():
                self._cache = self.model(input_ids=ids, use_cache=True).past_key_values
            self.forward_passes += 1
        return self._cache

    def _score_chunk(self, rows: list[list[int]], lengths: list[int], use_prefix_cache: bool) -> list[float]:
        torch = self._torch
        prefix = self._prefix_ids
        room = self.max_length - len(prefix)
        rows = [row[-room:] for row in rows]  # an over-long text loses its start, never the candidate
        if not use_prefix_cache:
            rows = [prefix + row for row in rows]
        width = max(len(r) for r in rows)
        keep_logits = max(lengths) + 1
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for r, seq in enumerate(rows):
            input_ids[r, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            attention[r, width - len(seq) :] = 1
        offset = 0
        past = None
        if use_prefix_cache:
            offset = len(prefix)
            past = copy.deepcopy(self._prefix_cache())
            past.batch_repeat_interleave(len(rows))
            attention = torch.cat([torch.ones((len(rows), offset), dtype=torch.long), attention], dim=1)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)[:, offset:]
        with torch.inference_mode():
            logits = self.model(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                position_ids=positions.to(self.device),
                past_key_values=past,
                logits_to_keep=keep_logits,
                use_cache=use_prefix_cache,
            ).logits
            logprobs = torch.log_softmax(logits.float(), dim=-1).cpu()
        self.forward_passes += 1
        scores = []
        for r, (seq, n) in enumerate(zip(rows, lengths, strict=True)):
            # logits kept for the last K positions; position K-1-n predicts the candidate's first token
            target = torch.tensor(seq[-n:], dtype=torch.long).unsqueeze(1)
            picked = logprobs[r, keep_logits - 1 - n : keep_logits - 1, :].gather(1, target)
            scores.append(float(picked.mean()))
        return scores

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "device": self.device, "batch_size": self.batch_size}
