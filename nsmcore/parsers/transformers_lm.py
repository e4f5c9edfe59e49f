"""A local causal language model, constrained so that its output is always legal.

For each slot in schema order, the parser scores every allowed value as a continuation of an
instruction prompt (the guidelines' slot and value descriptions, the text, and the slots chosen so
far) and keeps the value with the highest mean token log-likelihood (normalised for length, so a
value of many tokens is not penalised for being long). The output can only be a value from each
slot's set: legality is a property of the decoder, as in the paper's constrained setting.

Batching: the instruction prefix, the same for every prompt, is read once per model and cached.
For one slot, a batch of texts then takes two forward passes: the first reads every text's suffix
(text and slots so far, left-padded, position ids from the attention mask so that padding changes
no score) and gives each candidate's first token; the second reads only the candidates' remaining
tokens over that cache. A batch of B texts costs at most 24 passes, where scoring one candidate at
a time (``strategy="naive"``, kept as baseline and check) costs 42 per text.

Models are loaded with ``from_pretrained`` on a hub name or a local path; no machine here can
download, so tests build tiny random models locally.

Joint decoding (``decoding="joint"``, the default): the slot-by-slot scores are read as per-slot
distributions (a softmax over each slot's candidates' mean log-likelihoods, each slot scored after
the values chosen greedily before it) and decoded like the classifier's, inside the rule set
(nsmcore.decoding): the likeliest explication the rules route, with each label's region mass and
the per-slot posteriors in the raw output. ``decoding="greedy"`` keeps each slot's best value.

A fine-tuned parser (nsmcore.lora) is a base model and a LoRA adapter: ``adapter=`` names the
adapter folder, which is loaded over the base and merged into it, so decoding is exactly the same
code; a merged checkpoint is simply a model. A model folder that holds only an adapter is read as
that adapter over the base its config names. The parser's name and version record the adapter
(``transformers:BASE+ADAPTER``, version ``REVISION+aDIGEST-pN``), so predictions say which
fine-tune made them and a new adapter is a new parser version.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from nsmcore.decoding import rules_tag
from nsmcore.parsers.base import (
    Parser,
    ParseResult,
    ParserUnavailable,
    Timer,
    decoded_result,
    result_from_object,
)
from nsmcore.parsers.prompt import PROMPT_VERSION, slot_prefix, slot_suffix
from nsmcore.schema import SLOTS

#: batched: two forward passes per slot for a whole batch of texts (the default); naive: one forward
#: pass per candidate value, the plain way to score candidates (kept as the benchmark's baseline and
#: as an independent check of the batched scores).
STRATEGIES = ("batched", "naive")
DECODINGS = ("joint", "greedy")


@contextlib.contextmanager
def quiet_peft() -> Iterator[None]:
    """peft 0.21 reads ``model.is_gradient_checkpointing``, which transformers 5 deprecates with a
    FutureWarning on every wrap; the warning is about peft's code, not ours or the user's."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        yield


def pick_device(device: str | None) -> str:
    import torch

    if device and device != "auto":
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def adapter_digest(folder: str | Path) -> str:
    """A digest of an adapter folder's config and weights: a retrained adapter gets a new one."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).iterdir()):
        if path.is_file() and path.name.startswith("adapter_"):
            digest.update(path.name.encode() + b"\0")
            with path.open("rb") as data:
                for block in iter(lambda: data.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:12]


def adapter_base(folder: str | Path) -> str:
    """The base model an adapter folder was trained on (its adapter_config.json), or ""."""
    config = Path(folder) / "adapter_config.json"
    try:
        return str(json.loads(config.read_text()).get("base_model_name_or_path") or "")
    except (OSError, ValueError):
        return ""


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
        strategy: str = "batched",
        adapter: str = "",
        decoding: str = "joint",
        rule_set: Any = None,
        label: str = "",
    ):
        folder = Path(model).expanduser() if model else None
        is_adapter = folder is not None and folder.is_dir() and not (folder / "config.json").is_file()
        if is_adapter and (folder / "adapter_config.json").is_file() and not adapter:
            # an adapter folder given as the model: its base is in its config
            adapter, model = model, adapter_base(folder)
            if not model:
                raise ParserUnavailable(f"the adapter in {folder} does not name its base model")
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
        if strategy not in STRATEGIES:
            raise ParserUnavailable(f"unknown strategy {strategy!r}; strategies: {', '.join(STRATEGIES)}")
        self.strategy = strategy
        if decoding not in DECODINGS:
            raise ParserUnavailable(f"unknown decoding {decoding!r}; decodings: {', '.join(DECODINGS)}")
        self.decoding = decoding
        #: a registry's NAME@VERSION: predictions are named by it instead of the model and adapter
        self.label = label
        #: the rule set joint decoding routes into (None: the bundled default); a prefill job sets
        #: the active one
        self.rule_set = rule_set
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
        self.adapter = adapter
        self._adapter_digest = ""
        if adapter:
            self._load_adapter(adapter)
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

    def _load_adapter(self, adapter: str) -> None:
        """A peft LoRA adapter over the loaded base, merged into it: decoding then runs on a plain
        model, as fast as the base."""
        folder = Path(adapter).expanduser()
        if not (folder / "adapter_config.json").is_file():
            raise ParserUnavailable(f"no LoRA adapter at {adapter}: the folder has no adapter_config.json")
        try:
            from peft import PeftModel
        except ImportError as error:  # pragma: no cover - peft is in requirements.txt
            raise ParserUnavailable(f"loading an adapter needs peft: {error}") from None
        try:
            with quiet_peft():
                self.model = PeftModel.from_pretrained(self.model, str(folder)).merge_and_unload()
        except (OSError, ValueError, RuntimeError, KeyError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ParserUnavailable(
                f"cannot load the adapter {adapter} over {self.model_source!r}: {first}"
            ) from None
        self._adapter_digest = adapter_digest(folder)

    @property
    def name(self) -> str:
        if self.label:
            return f"transformers:{self.label}"
        base = f"transformers:{self.model_source}"
        return f"{base}+{self.adapter}" if self.adapter else base

    @property
    def version(self) -> str:
        """The model's revision, the adapter's digest, the prompt's version and, decoded jointly,
        the rule set decoded into (another rule set routes other explications)."""
        adapter = f"+a{self._adapter_digest}" if self.adapter else ""
        joint = f"-joint-{rules_tag(self.rule_set)}" if self.decoding == "joint" else ""
        return f"{self._revision}{adapter}-p{PROMPT_VERSION}{joint}"

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
            values = self._value_ids[slot.name]
            if self.strategy == "naive":
                rows = [suffix_ids[i] + ids for i in range(len(texts)) for ids in values]
                flat = self.score_rows(rows, [len(ids) for _ in texts for ids in values])
                table = [flat[i * len(values) : (i + 1) * len(values)] for i in range(len(texts))]
            else:
                table = self.score_candidates(suffix_ids, values)
            for i in range(len(texts)):
                scores[i][slot.name] = dict(zip(slot.values, table[i], strict=True))
                chosen[i][slot.name] = max(slot.values, key=scores[i][slot.name].__getitem__)
        if self.decoding == "joint":
            return self._joint(chosen, scores, timer.per_item(len(texts)))
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

    def _joint(
        self, chosen: list[dict[str, str]], scores: list[dict[str, dict[str, float]]], seconds: float | None
    ) -> list[ParseResult]:
        """The joint decoding of the slot scores (their softmax per slot), kept with them."""
        import numpy as np

        from nsmcore.decoding import decode, rule_lattice

        # the mean log-likelihoods as scores: decode() takes their softmax per slot
        arrays = [np.array([[sc[slot.name][v] for v in slot.values] for sc in scores]) for slot in SLOTS]
        decoded = decode(arrays, lattice=rule_lattice(self.rule_set))
        return [
            decoded_result(
                d,
                seconds,
                greedy=c,
                mean_logprob={s: {v: round(x, 4) for v, x in dd.items()} for s, dd in sc.items()},
            )
            for d, c, sc in zip(decoded, chosen, scores, strict=True)
        ]

    def score_candidates(self, suffix_ids: list[list[int]], values: list[list[int]]) -> list[list[float]]:
        """Mean log-probability of every candidate value after every text's prompt: ``[text][value]``.

        Two forward passes per slot, however many candidates: the first reads each text's suffix
        once (after the cached prefix) and gives every candidate's first token; the second reads
        only the remaining candidate tokens, over that pass's cache repeated once per candidate.
        """
        per_chunk = max(1, self.max_rows // len(values))
        out: list[list[float]] = []
        for start in range(0, len(suffix_ids), per_chunk):
            out.extend(self._score_candidates_chunk(suffix_ids[start : start + per_chunk], values))
        return out

    def _score_candidates_chunk(
        self, suffix_ids: list[list[int]], values: list[list[int]]
    ) -> list[list[float]]:
        torch = self._torch
        prefix = len(self._prefix_ids)
        room = self.max_length - prefix - max(len(v) for v in values)
        rows = [ids[-room:] for ids in suffix_ids]  # an over-long text loses its start
        n, width = len(rows), max(len(r) for r in rows)
        input_ids = torch.full((n, width), self.pad_id, dtype=torch.long)
        suffix_mask = torch.zeros((n, width), dtype=torch.long)
        for r, seq in enumerate(rows):
            input_ids[r, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            suffix_mask[r, width - len(seq) :] = 1
        mask = torch.cat([torch.ones((n, prefix), dtype=torch.long), suffix_mask], dim=1)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        past = copy.deepcopy(self._prefix_cache())
        past.batch_repeat_interleave(n)
        with torch.inference_mode():
            first = self.model(
                input_ids=input_ids.to(self.device),
                attention_mask=mask.to(self.device),
                position_ids=positions[:, prefix:].to(self.device),
                past_key_values=past,
                use_cache=True,
                logits_to_keep=1,
            )
            self.forward_passes += 1
            first_lp = torch.log_softmax(first.logits[:, -1, :].float(), dim=-1).cpu()
            sums = [[float(first_lp[i, ids[0]]) for ids in values] for i in range(n)]
            rest = max(len(ids) for ids in values) - 1
            if rest:
                k = len(values)
                cache = first.past_key_values
                cache.batch_repeat_interleave(k)  # row i * k + v: text i, candidate v
                tail = torch.full((n * k, rest), self.pad_id, dtype=torch.long)
                tail_mask = torch.zeros((n * k, rest), dtype=torch.long)
                for v, ids in enumerate(values):
                    if len(ids) > 1:
                        tail[v::k, : len(ids) - 1] = torch.tensor(ids[:-1], dtype=torch.long)
                        tail_mask[v::k, : len(ids) - 1] = 1
                mask2 = torch.cat([mask.repeat_interleave(k, dim=0), tail_mask], dim=1)
                start = mask.sum(-1).repeat_interleave(k).unsqueeze(1)
                positions2 = start + torch.arange(rest).unsqueeze(0)
                second = self.model(
                    input_ids=tail.to(self.device),
                    attention_mask=mask2.to(self.device),
                    position_ids=positions2.to(self.device),
                    past_key_values=cache,
                    use_cache=False,
                )
                self.forward_passes += 1
                lp = torch.log_softmax(second.logits.float(), dim=-1).cpu()
                for i in range(n):
                    for v, ids in enumerate(values):
                        for j, token in enumerate(ids[1:]):
                            sums[i][v] += float(lp[i * k + v, j, token])
        return [[total / len(ids) for total, ids in zip(row, values, strict=True)] for row in sums]

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
        out = {
            **super().describe(),
            "device": self.device,
            "batch_size": self.batch_size,
            "decoding": self.decoding,
        }
        if self.adapter:
            out["adapter"] = self.adapter
        return out
