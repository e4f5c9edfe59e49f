"""Parsers: text to explication. ``make_parser(backend, **options)`` builds one by name.

Backends: ``lexical`` (the default; cue lists, no model), ``transformers`` (a local causal LM,
constrained to legal output), ``openai`` (any OpenAI-compatible chat server), ``classifier``
(per-slot scikit-learn classifiers trained from gold; a folder written by train-classifier). Only
the lexical backend is imported eagerly; the others load torch or scikit-learn, or open
connections, only when asked for.
"""

from __future__ import annotations

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
        from nsmcore.parsers.openai_compat import OpenAICompatParser as cls
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
