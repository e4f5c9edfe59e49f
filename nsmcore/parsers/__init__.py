"""Parsers: text to explication. ``make_parser(backend, **options)`` builds one by name.

Backends: ``lexical`` (the default; cue lists, no model), ``transformers`` (a local causal LM,
constrained to legal output), ``openai`` (any OpenAI-compatible chat server), ``classifier``
(per-slot scikit-learn classifiers trained from gold; a folder written by train-classifier). Only
the lexical backend is imported eagerly; the others load torch or scikit-learn, or open
connections, only when asked for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nsmcore.parsers.base import Parser, ParseResult, ParserUnavailable, result_from_object, result_from_text
from nsmcore.parsers.lexical import CueListError, LexicalParser

BACKENDS = ("lexical", "transformers", "openai", "classifier")

__all__ = [
    "BACKENDS",
    "CueListError",
    "LexicalParser",
    "ParseResult",
    "Parser",
    "ParserUnavailable",
    "make_parser",
    "result_from_object",
    "result_from_text",
    "trained_item_ids",
]


def make_parser(backend: str = "lexical", **options: Any) -> Parser:
    """Build a parser. Options are the backend's keyword arguments; empty ones are dropped so that
    unset settings fall back to the backend's defaults. Raises ParserUnavailable with a message
    naming the problem (an unknown backend, a model that does not load)."""
    options = {k: v for k, v in options.items() if v not in (None, "")}
    if backend == "lexical":
        cls: type[Parser] = LexicalParser
    elif backend == "transformers":
        from nsmcore.parsers.transformers_lm import TransformersParser as cls
    elif backend == "openai":
        from nsmcore.parsers.openai_compat import OpenAICompatParser as cls  # each backend when named
    elif backend == "classifier":
        from nsmcore.parsers.classifier import ClassifierParser as cls
    else:
        raise ParserUnavailable(f"unknown parser backend {backend!r}; backends: {', '.join(BACKENDS)}")
    try:
        return cls(**options)
    except CueListError as error:
        raise ParserUnavailable(f"lexical parser: {error}") from None
    except TypeError as error:  # an option this backend does not take
        raise ParserUnavailable(f"{backend} parser: {error}") from None


def _ids_in(doc: Any) -> set[str]:
    """Item ids a card or training manifest records: ``item_ids`` at its top, under ``data`` (a
    train job's manifest inside a card's meta), and a labelled source's ``ids``."""
    found: set[str] = set()
    if not isinstance(doc, dict):
        return found
    for holder in (
        doc,
        doc.get("meta"),
        (doc.get("meta") or {}).get("data") if isinstance(doc.get("meta"), dict) else None,
    ):
        if isinstance(holder, dict) and isinstance(holder.get("item_ids"), list):
            found |= {str(i) for i in holder["item_ids"]}
        if isinstance(holder, dict) and isinstance(holder.get("data"), dict):
            found |= {str(i) for i in holder["data"].get("item_ids", []) or []}
    sources = doc.get("sources") if isinstance(doc.get("sources"), dict) else {}
    for key in ("labelled", "calibration"):  # texts whose labels trained it or chose its gap
        if isinstance(sources.get(key), dict):
            found |= {str(i) for i in sources[key].get("ids", []) or []}
    return found


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def trained_item_ids(name: str) -> frozenset[str] | None:
    """The corpus ids of the items a parser was trained on, read from what its training wrote
    beside the model (a classifier's ``card.json``; a LoRA adapter's training manifests under
    ``data/``), without loading the model. None when the parser records none (the lexical
    baseline, a server, a model trained elsewhere): nothing is known, so nothing is refused."""
    if name.startswith("classifier:"):
        folders = [Path(name.removeprefix("classifier:")).expanduser()]
        docs = [_read_json(folders[0] / "card.json")]
    elif name.startswith("transformers:") and "+" in name:
        folder = Path(name.rpartition("+")[2]).expanduser()
        docs = [_read_json(folder / "card.json")]
        docs += [_read_json(path) for path in sorted((folder / "data").glob("*.manifest.json"))]
    else:
        return None
    docs = [d for d in docs if d is not None]
    if not docs:
        return None
    return frozenset(set().union(*(_ids_in(d) for d in docs)))
