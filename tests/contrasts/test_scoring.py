"""Every parser scored on a set: the lexical baseline and a registered classifier, each as
nsmcore.counterfactual scores its own parse of x and x'; cached until the pairs change; a parser
that cannot be built is listed with its reason."""

from __future__ import annotations

import pytest

from contrasts import scoring
from contrasts.scoring import parser_choice, parser_choices, score_set
from contrasts.services import pair_add, pair_set_create
from nsmcore.counterfactual import CounterfactualPair, counterfactual
from nsmcore.parsers import make_parser
from registry.services import parser_register
from tests.contrasts.conftest import FLIP

pytestmark = pytest.mark.django_db


def figures(row) -> list[int]:
    return [p.k for p in (row.slot, row.label, row.clean, row.causal)] + [row.slot.n]


def test_the_lexical_parser_is_scored_as_nsmcore_scores_its_parses(pair_set):
    (score,) = score_set(pair_set, choices=[parser_choice("lexical")])
    assert score.reason == "" and score.report is not None
    parser = make_parser("lexical")
    pairs = list(pair_set.pairs.select_related("item").order_by("id"))
    by_hand = counterfactual(
        [
            CounterfactualPair(
                str(p.pk),
                p.family,
                tuple(p.targets),
                p.item.reference_label,
                p.expected_label(),
                parser.parse_one(p.item.text).explication,
                parser.parse_one(p.text).explication,
                {s: tuple(v) for s, v in p.targets.items()},
            )
            for p in pairs
        ],
        tier="CF",
        pass_name="by hand",
    )
    assert figures(score.report.overall) == figures(by_hand.overall)
    assert [r.family for r in score.report.families] == ["F-agency", "F-intensity", "invariance"]
    assert score.report.overall.slot.n == 3 and len(score.outcomes) == 3
    assert score.report.evidence.tier == "CF" and "pilot-pairs@v1" in score.report.evidence.pass_name
    invariant = next(o for o in score.outcomes if o.family == "invariance")
    assert invariant.slot == invariant.clean  # no target: the intended flip is that nothing changed


def test_every_registered_parser_is_scored_beside_the_lexical_one(pair_set, tiny_parser):
    assert [c.key for c in parser_choices()] == ["lexical", "tiny@1"]
    scores = {s.parser: s for s in score_set(pair_set)}
    assert set(scores) == {"lexical", "tiny@1"}
    tiny = scores["tiny@1"]
    assert tiny.report is not None and tiny.backend == "classifier" and tiny.name.startswith("classifier")
    assert tiny.report.overall.slot.n == 3
    assert parser_choice("tiny") == parser_choice("tiny@1")  # a name alone: its newest version
    doc = tiny.to_dict()
    assert doc["scored"] and doc["report"]["overall"]["n"] == 3 and len(doc["pairs"]) == 3


def test_a_parser_that_cannot_be_built_is_listed_with_its_reason(pair_set, tmp_path):
    parser_register(name="gone", backend="classifier", folder=tmp_path / "missing", card={}, trained_on=[])
    scores = {s.parser: s for s in score_set(pair_set)}
    assert scores["lexical"].report is not None
    assert scores["gone@1"].report is None and scores["gone@1"].reason
    assert scores["gone@1"].to_dict()["scored"] is False


def test_scores_are_cached_until_the_pairs_change(pair_set, monkeypatch):
    parsed: list[int] = []
    real = scoring.parser_build

    def counting(**options):
        parser = real(**options)
        original = parser.parse

        def parse(texts):
            parsed.append(len(texts))
            return original(texts)

        parser.parse = parse
        return parser

    monkeypatch.setattr(scoring, "parser_build", counting)
    first = score_set(pair_set)
    assert parsed == [5]  # two texts of t3-0's pairs are one item text: x read once
    again = score_set(pair_set)
    assert again == first and parsed == [5]  # read from the cache
    pair_add(
        user=None, pair_set=pair_set, **{**FLIP, "text": "I was happy when my cousin won the chess final."}
    )
    assert score_set(pair_set)[0].report.overall.slot.n == 4
    assert parsed == [5, 6]


def test_an_empty_set_has_no_scores(adjudicator):
    assert score_set(pair_set_create(user=adjudicator, name="empty")) == []
