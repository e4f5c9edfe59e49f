"""The prime grammar check: is a rendered line made of primes, in one of the renderer's frames?

The grammar is data (``data/grammar.txt``), a small context-free grammar; the parser is a
memoised top-down recogniser, which is plenty for lines of a dozen tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from nsmcore.lexicon import lexicon_words, tokenize

START = "LINE"


class GrammarFileError(ValueError):
    pass


@dataclass(frozen=True)
class Grammar:
    rules: dict[str, tuple[tuple[str, ...], ...]]

    def recognise(self, tokens: list[str]) -> bool:
        n = len(tokens)
        memo: dict[tuple[str, int], frozenset[int]] = {}

        def ends(symbol: str, start: int) -> frozenset[int]:
            if not _is_nonterminal(symbol):
                ok = start < n and tokens[start] == symbol
                return frozenset({start + 1}) if ok else frozenset()
            key = (symbol, start)
            if key not in memo:
                memo[key] = frozenset()  # the grammar has no left recursion; this guards it
                found: set[int] = set()
                for alternative in self.rules[symbol]:
                    positions = {start}
                    for part in alternative:
                        positions = {e for p in positions for e in ends(part, p)}
                        if not positions:
                            break
                    found |= positions
                memo[key] = frozenset(found)
            return memo[key]

        return n in ends(START, 0)

    def terminals(self) -> frozenset[str]:
        return frozenset(
            part
            for alternatives in self.rules.values()
            for alternative in alternatives
            for part in alternative
            if not _is_nonterminal(part)
        )


def _is_nonterminal(symbol: str) -> bool:
    return symbol.isupper()


def parse_grammar(text: str) -> Grammar:
    """Read the BNF of data/grammar.txt; refuse undefined nonterminals."""
    rules: dict[str, list[tuple[str, ...]]] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if ":=" in line:
            name, body = (part.strip() for part in line.split(":=", 1))
            if not _is_nonterminal(name) or name in rules:
                raise GrammarFileError(f"line {number}: bad or repeated rule name {name!r}")
            current = name
            rules[name] = []
        elif line.startswith("|") and current is not None:
            body = line[1:]
        else:
            raise GrammarFileError(f"line {number}: expected 'NAME := ...' or '| ...'")
        for alternative in body.split("|"):
            parts = tuple(alternative.split())
            if not parts:
                raise GrammarFileError(f"line {number}: empty alternative in {current}")
            rules[current].append(parts)
    for alternatives in rules.values():
        for alternative in alternatives:
            for part in alternative:
                if _is_nonterminal(part) and part not in rules:
                    raise GrammarFileError(f"undefined nonterminal {part}")
    if START not in rules:
        raise GrammarFileError(f"no {START} rule")
    return Grammar({name: tuple(alts) for name, alts in rules.items()})


# A pure memo of data shipped in the package: every process reads the same file, so none can disagree.
@cache
def load_grammar() -> Grammar:
    text = resources.files("nsmcore.data").joinpath("grammar.txt").read_text("utf-8")
    return parse_grammar(text)


def check_line(line: str) -> list[str]:
    """Problems with one line (empty when it is legal)."""
    return list(_check_line(line))


@lru_cache(maxsize=8192)
def _check_line(line: str) -> tuple[str, ...]:
    # Pure and called with the same few dozen rendered lines over and over: cache it. A pure
    # function of the line and the closed grammar, so no two processes can disagree on it.
    return tuple(_problems(line))


def _problems(line: str) -> list[str]:
    tokens = tokenize(line)
    if not tokens:
        return ["empty line"]
    words = lexicon_words()
    outside = [t for t in tokens if t not in words and t != ","]
    if outside:
        return [f"not in the prime lexicon: {', '.join(repr(t) for t in outside)}"]
    if not load_grammar().recognise(tokens):
        return ["does not match any frame of the prime grammar"]
    return []


def is_legal_line(line: str) -> bool:
    return not check_line(line)
