"""The parser interface: texts in, one ParseResult per text out.

A parser is the only learned part of the pathway. Whatever the backend, each result carries the
explication (None when the output could not be read as one), the raw output exactly as the
backend produced it, the legality problems, and the seconds it took. Two kinds of failure are
kept apart:

- one bad output (unreadable JSON, an unknown value) is a *result*: recorded as illegal, and the
  caller goes on with the next text;
- a backend that cannot work at all (an unreachable server, a model path that does not load)
  raises ParserUnavailable, with a message that names the problem.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nsmcore.legality import check
from nsmcore.schema import Explication, SchemaProblem


class ParserUnavailable(RuntimeError):
    """The backend cannot parse anything: the message says why (and is shown to users)."""


@dataclass(frozen=True)
class ParseResult:
    explication: Explication | None
    raw_output: str
    errors: tuple[SchemaProblem, ...] = ()
    seconds: float = field(default=0.0, compare=False)  # a measurement, not part of the result
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def legal(self) -> bool:
        return self.explication is not None and not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {
            "explication": self.explication.as_dict() if self.explication else None,
            "legal": self.legal,
            "errors": [p.as_dict() for p in self.errors],
            "raw_output": self.raw_output,
            "seconds": round(self.seconds, 6),
        }


def result_from_object(obj: Any, raw_output: str, seconds: float = 0.0) -> ParseResult:
    """Check a decoded object for legality; an illegal one keeps every problem found."""
    explication, problems = check(obj)
    return ParseResult(explication if not problems else None, raw_output, tuple(problems), seconds)


def decoded_result(decoded: Any, seconds: float | None, **kept: Any) -> ParseResult:
    """The result of a joint decoding (nsmcore.decoding.Decoded): its values as the explication,
    and in the raw output the decoding (label, label mass, posteriors, confidence), the values and
    whatever else the backend keeps (``kept``); ``extra["decoded"]`` holds the decoding too."""
    summary = decoded.as_dict()
    raw = json.dumps(
        {"decoding": "joint", **summary, "values": decoded.values, **kept}, separators=(",", ":")
    )
    result = result_from_object(decoded.values, raw, seconds)
    return ParseResult(result.explication, raw, result.errors, seconds, extra={"decoded": summary})


def result_from_text(raw_output: str, seconds: float = 0.0) -> ParseResult:
    """Read a model's text reply as JSON (the first {...} object in it) and check it."""
    obj = extract_json_object(raw_output)
    if obj is None:
        problem = SchemaProblem("(output)", "the reply holds no JSON object")
        return ParseResult(None, raw_output, (problem,), seconds)
    return result_from_object(obj, raw_output, seconds)


def extract_json_object(text: str) -> Any:
    """The first decodable JSON object in ``text`` (models wrap JSON in prose or code fences)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return obj
    return None


class Parser(ABC):
    """A backend. ``name`` and ``version`` identify its predictions (re-runs skip what exists)."""

    #: the backend family: lexical, transformers, openai
    backend: str = ""

    @property
    @abstractmethod
    def name(self) -> str:
        """Stable identifier of this parser and model, e.g. ``transformers:/models/llama-1b``."""

    @property
    @abstractmethod
    def version(self) -> str:
        """What changes when the same name would give different outputs (cue list, revision...)."""

    @abstractmethod
    def parse(self, texts: Sequence[str]) -> list[ParseResult]:
        """One result per text, in order."""

    def parse_one(self, text: str) -> ParseResult:
        return self.parse([text])[0]

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "name": self.name, "version": self.version}


class Timer:
    """Seconds since construction; a parser splits a batch's time evenly over its texts."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def per_item(self, n: int) -> float:
        return (time.perf_counter() - self.start) / max(n, 1)
