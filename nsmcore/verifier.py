"""The per-line NLI verifier: premise = the item's text, hypothesis = each rendered line.

Any sequence-classification NLI checkpoint, by hub name or local path (a sensible default is a
DeBERTa-v3 NLI model such as ``MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli``, the
paper's family). The entailment index is read from ``config.id2label``; a model without an
entailment label is refused, as are labels this module cannot tell apart. Pairs are batched by
token count (sorted, so a batch pads little), under ``torch.inference_mode``, on a GPU when present.

A line is entailed when p(entailment) >= threshold (0.5 by default); an item's score is entailed
lines / lines (SPEC section 6). Results can be cached by model id and revision, text and line, so
verifying again costs nothing: pass any object with ``get_many`` and ``set_many``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

DEFAULT_MODEL = "MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli"
DEFAULT_THRESHOLD = 0.5


class VerifierUnavailable(RuntimeError):
    """The model cannot serve as a verifier; the message says why."""


@dataclass(frozen=True)
class LineScore:
    p_entailment: float
    p_neutral: float | None
    p_contradiction: float | None

    def entailed(self, threshold: float = DEFAULT_THRESHOLD) -> bool:
        return self.p_entailment >= threshold


class Cache(Protocol):
    def get_many(self, keys: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], LineScore]: ...

    def set_many(self, scores: dict[tuple[str, str, str], LineScore]) -> None: ...


def text_key(text: str) -> str:
    """The cache's name for a premise: its sha256 (texts are long, lines are short)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def label_indexes(id2label: dict[Any, str]) -> tuple[int, int | None, int | None]:
    """(entailment, neutral, contradiction) indexes from a config's id2label; names are matched
    by their start, case-insensitive ('entailment', 'ENTAILMENT', 'entail'...)."""
    found: dict[str, int] = {}
    for index, label in id2label.items():
        name = str(label).strip().lower()
        for kind in ("entail", "neutral", "contradict"):
            if name.startswith(kind):
                if kind in found:
                    raise VerifierUnavailable(f"two labels read as {kind}: {dict(id2label)}")
                found[kind] = int(index)
    if "entail" not in found:
        raise VerifierUnavailable(
            f"the model has no entailment label (config.id2label is {dict(id2label)}); "
            "choose an NLI checkpoint whose labels name entailment"
        )
    return found["entail"], found.get("neutral"), found.get("contradict")


def is_local_path(model: str) -> bool:
    """A model given as a folder (absolute, relative with ./ or ../, or under ~), not a hub name."""
    return model.startswith(("/", "./", "../", "~"))


def model_unavailable(model: str, *, download: bool = False) -> str | None:
    """Why ``model`` cannot be loaded here, or None when it may be: a local folder with a
    ``config.json``, or a hub name already in this machine's Hugging Face cache (any hub name when
    ``download`` is allowed). Reads no weights and never touches the network, so a web request
    can ask it: loading a hub model that is not cached retries for half a minute offline."""
    if not model:
        return "no model given"
    if is_local_path(model):
        folder = Path(model).expanduser()
        if not folder.is_dir():
            return f"no model folder at {model}"
        if not (folder / "config.json").is_file():
            return f"{model} holds no config.json: not a model folder"
        return None
    if download:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
        from huggingface_hub.utils import HFValidationError
    except ImportError:  # pragma: no cover - installed with transformers
        return "huggingface_hub is not installed"
    try:
        cached = try_to_load_from_cache(model, "config.json")
    except HFValidationError:
        return f"{model} is neither a model folder nor a Hugging Face model name"
    if not isinstance(cached, str):
        return f"{model} is not in the local Hugging Face cache and downloads are off"
    return None


def item_score(scores: Iterable[LineScore], threshold: float = DEFAULT_THRESHOLD) -> float | None:
    scores = list(scores)
    if not scores:
        return None
    return sum(s.entailed(threshold) for s in scores) / len(scores)


class Verifier:
    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str | None = "auto",
        batch_size: int = 32,
        threshold: float = DEFAULT_THRESHOLD,
        max_length: int = 512,
        revision: str | None = None,
        local_files_only: bool = False,
    ):
        """``local_files_only``: load a hub name from the local cache only, failing at once when
        it is not there (the default may download it, and retries for half a minute offline)."""
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as error:  # pragma: no cover - both are in requirements.txt
            raise VerifierUnavailable(f"the verifier needs torch and transformers: {error}") from None
        if not model:
            raise VerifierUnavailable("no model given: set NSM_VERIFIER_MODEL to a name or a local path")
        if is_local_path(model) and not Path(model).expanduser().is_dir():
            raise VerifierUnavailable(f"cannot load the NLI model: no model folder at {model}")
        self._torch = torch
        self.model_id = model
        self.device = (
            device if device and device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
        )
        self.batch_size = max(1, batch_size)
        self.threshold = threshold
        options = {"revision": revision, "local_files_only": local_files_only}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, **options)
            self.model = AutoModelForSequenceClassification.from_pretrained(model, **options)
        except (OSError, ValueError, KeyError, RuntimeError) as error:  # a broken folder raises any
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise VerifierUnavailable(f"cannot load the NLI model {model!r}: {first}") from None
        self.entail, self.neutral, self.contradict = label_indexes(self.model.config.id2label)
        self.model.to(self.device).eval()
        self.max_length = min(
            max_length, int(getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        )
        from nsmcore.parsers.transformers_lm import model_revision

        self.revision = model_revision(self.model, model)
        #: forward passes so far (the benchmark reports them)
        self.forward_passes = 0

    def score(self, pairs: Sequence[tuple[str, str]], *, cache: Cache | None = None) -> list[LineScore]:
        """p(entailment), p(neutral), p(contradiction) of each (premise, hypothesis), in order."""
        keys = [(self.cache_model, text_key(p), h) for p, h in pairs]
        known = cache.get_many(keys) if cache is not None else {}
        todo = [k for k, key in enumerate(keys) if key not in known]
        fresh = self._score([pairs[k] for k in todo])
        if cache is not None and fresh:
            cache.set_many({keys[k]: s for k, s in zip(todo, fresh, strict=True)})
        out = dict(known)
        out.update({keys[k]: s for k, s in zip(todo, fresh, strict=True)})
        return [out[key] for key in keys]

    @property
    def cache_model(self) -> str:
        return f"{self.model_id}@{self.revision}"

    def _score(self, pairs: list[tuple[str, str]]) -> list[LineScore]:
        if not pairs:
            return []
        torch = self._torch
        # Tokenized once, all together (the fast tokenizer's batch call), then grouped by token
        # count so a batch pads least, each batch padded on its own; the order restored at the end.
        # Against one tokenizer call per batch grouped by characters: 1,275 -> 2,048 pairs/s on
        # the benchmark's tiny model, batches of 32 (benchmarks/bench_verifier.py).
        encoded = self.tokenizer(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            truncation="only_first",
            max_length=self.max_length,
        )
        fields = list(encoded.keys())
        order = sorted(range(len(pairs)), key=lambda k: len(encoded["input_ids"][k]))
        results: list[LineScore | None] = [None] * len(pairs)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            batch = self.tokenizer.pad(
                {name: [encoded[name][k] for k in chunk] for name in fields}, return_tensors="pt"
            ).to(self.device)
            with torch.inference_mode():
                probs = torch.softmax(self.model(**batch).logits.float(), dim=-1).cpu().tolist()
            self.forward_passes += 1
            for row, k in zip(probs, chunk, strict=True):
                results[k] = LineScore(
                    row[self.entail],
                    row[self.neutral] if self.neutral is not None else None,
                    row[self.contradict] if self.contradict is not None else None,
                )
        return [r for r in results if r is not None]
