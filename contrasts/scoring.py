"""A set's pairs scored for every parser there is: the lexical baseline and each registered
parser (the registry's, by NAME@VERSION). Each parser reads x (the item's generated text, the one
the adjudicator rewrote: a round's masked text hides the very words a rewrite changes) and x';
nsmcore.counterfactual scores the pairs with x expecting the item's reference label and x' the
pair's expected label (an invariance pair: the reference label again).

Scores are kept in Django's cache, as the evaluation's are (adjudication.evaluation.figures),
under the set, its pairs as they stand, the parser's identity and the rule set's hash. A parser
that cannot be built or run is listed with its reason instead of a score."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.utils.translation import gettext as _

from adjudication.evaluation.figures import CACHE_SECONDS
from contrasts.models import MinimalPair, PairSet
from nsmcore.counterfactual import (
    CounterfactualPair,
    CounterfactualReport,
    PairOutcome,
    counterfactual,
    pair_outcomes,
)
from nsmcore.evaluation_report import EvaluationError
from nsmcore.mapper import RuleSet
from nsmcore.parsers import Parser, ParserUnavailable
from predictions.parsers import parser_build
from registry.models import RegisteredParser
from rules.rulesets import active_rule_set

LEXICAL = "lexical"
TIER = "CF"  # the counterfactual benchmark's tier, as nsmcore's reports name it


@dataclass(frozen=True)
class ParserChoice:
    """A parser a set can be scored for: ``key`` is "lexical" or a registered NAME@VERSION."""

    key: str
    backend: str
    registered: int | None = None  # the registry row's id
    folder: str = ""

    def identity(self) -> str:
        """What the cache key names a registered parser by: its row never changes (a retrained
        one is a new version). The lexical parser is named by the built parser's name and version
        (its cue list's)."""
        return f"registry:{self.registered}:{self.key}:{self.folder}"

    def build(self) -> Parser:
        if self.registered is None:
            return parser_build(backend=LEXICAL)
        return parser_build(backend=self.backend, model=self.key)


def parser_choices() -> list[ParserChoice]:
    """The lexical parser, then every registered parser (by name, newest version first)."""
    rows = RegisteredParser.objects.order_by("name", "-version").values_list(
        "pk", "name", "version", "backend", "folder"
    )
    return [ParserChoice(LEXICAL, LEXICAL)] + [
        ParserChoice(f"{name}@{version}", backend, pk, folder) for pk, name, version, backend, folder in rows
    ]


def parser_choice(key: str) -> ParserChoice | None:
    """The parser named ``key`` ("lexical", NAME@VERSION, or NAME for its newest version)."""
    choices = parser_choices()
    for choice in choices:
        if choice.key == key:
            return choice
    return next((c for c in choices if c.registered and c.key.partition("@")[0] == key), None)


@dataclass(frozen=True)
class ParserScore:
    parser: str  # the choice's key
    backend: str
    name: str = ""  # the built parser's own name and version ("" when it could not be built)
    version: str = ""
    report: CounterfactualReport | None = None
    outcomes: tuple[PairOutcome, ...] = ()
    unreadable: int = 0  # outputs (of 2 per pair) that were no legal explication
    reason: str = ""  # why there is no score

    def to_dict(self) -> dict[str, Any]:
        return {
            "parser": self.parser,
            "backend": self.backend,
            "name": self.name,
            "version": self.version,
            "scored": self.report is not None,
            "reason": self.reason,
            "unreadable": self.unreadable,
            "report": self.report.to_dict() if self.report else None,
            "pairs": [o.to_dict() for o in self.outcomes],
        }


def _pairs(pair_set: PairSet) -> list[MinimalPair]:
    return list(pair_set.pairs.select_related("item").order_by("id"))


def _stamp(pairs: list[MinimalPair]) -> str:
    """What the scores depend on in the pairs and their items (an open set gains pairs)."""
    parts = [
        (p.pk, p.text, p.targets, p.expected_label(), p.item.text, p.item.reference_label) for p in pairs
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def score_set(
    pair_set: PairSet, *, choices: list[ParserChoice] | None = None, rule_set: RuleSet | None = None
) -> list[ParserScore]:
    """One score per parser (all of them unless ``choices`` names some); none for an empty set."""
    pairs = _pairs(pair_set)
    if not pairs:
        return []
    rule_set = rule_set or active_rule_set()
    stamp = _stamp(pairs)
    return [_score(pair_set, pairs, stamp, choice, rule_set) for choice in (choices or parser_choices())]


def _score(
    pair_set: PairSet, pairs: list[MinimalPair], stamp: str, choice: ParserChoice, rule_set: RuleSet
) -> ParserScore:
    parser: Parser | None = None
    try:
        if choice.registered is None:  # cheap to build, and its cue list's version names it
            parser = choice.build()
        identity = choice.identity() if parser is None else f"{parser.name}|{parser.version}"
        parts = (pair_set.pk, pair_set.version, stamp, identity, rule_set.content_hash)
        key = "nsm:contrast-scores:" + hashlib.sha256(repr(parts).encode()).hexdigest()
        found = cache.get(key)
        if found is not None:
            return found
        parser = parser or choice.build()
        texts = list(dict.fromkeys(t for p in pairs for t in (p.item.text, p.text)))
        results = dict(zip(texts, parser.parse(texts), strict=True))
    except (ParserUnavailable, RuntimeError, OSError, ValueError) as error:  # not cached: may work later
        return ParserScore(choice.key, choice.backend, reason=str(error) or type(error).__name__)
    read = [
        CounterfactualPair(
            str(p.pk),
            p.family,
            tuple(p.targets),
            p.item.reference_label,
            p.expected_label(),
            results[p.item.text].explication,
            results[p.text].explication,
            {slot: tuple(values) for slot, values in p.targets.items()},
        )
        for p in pairs
    ]
    try:
        report = counterfactual(read, rule_set, tier=TIER, pass_name=f"{choice.key} on {pair_set.spec}")
        outcomes = tuple(pair_outcomes(read, rule_set))
    except EvaluationError as error:
        return ParserScore(choice.key, choice.backend, parser.name, parser.version, reason=str(error))
    unreadable = sum(not results[t].legal for p in pairs for t in (p.item.text, p.text))
    score = ParserScore(choice.key, choice.backend, parser.name, parser.version, report, outcomes, unreadable)
    cache.set(key, score, CACHE_SECONDS)
    return score


def unknown_parser_message(key: str) -> str:
    return _("no parser %(parser)s; parsers: %(parsers)s") % {
        "parser": repr(key),
        "parsers": ", ".join(c.key for c in parser_choices()),
    }
