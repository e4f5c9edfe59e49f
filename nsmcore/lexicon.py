"""The closed prime lexicon: the 65 NSM primes, their English exponents and grammatical words."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Lexicon:
    primes: dict[str, tuple[str, ...]]  # prime -> its exponents (may be several words)
    grammatical: frozenset[str]

    @property
    def words(self) -> frozenset[str]:
        """Every single token a legal line may contain."""
        out = set(self.grammatical)
        for exponents in self.primes.values():
            for exponent in exponents:
                out.update(exponent.split())
        return frozenset(out)

    def prime_of(self, word: str) -> list[str]:
        """The primes whose exponents contain ``word`` (several for portmanteaus like can't)."""
        return [p for p, exps in self.primes.items() if any(word in e.split() for e in exps)]


# Pure memos of data shipped in the package: every process reads the same file.
@cache
def load_lexicon() -> Lexicon:
    doc = json.loads(resources.files("nsmcore.data").joinpath("primes.json").read_text("utf-8"))
    primes = {entry["prime"]: tuple(entry["exponents"]) for entry in doc["primes"]}
    return Lexicon(primes=primes, grammatical=frozenset(doc["grammatical_words"]["words"]))


@cache
def lexicon_words() -> frozenset[str]:
    return load_lexicon().words


def tokenize(line: str) -> list[str]:
    """Lower-cased whitespace tokens. A final full stop is allowed; any other punctuation stays
    attached to its token, so the check reports it rather than silently dropping it."""
    text = line.strip().lower()
    if text.endswith("."):
        text = text[:-1]
    # a comma joins two sentences of one line (the grammar's LINE): its own token
    return text.replace(", ", " , ").split()
