"""The evaluation service: a round's passes read from the database and scored by nsmcore, checked
against figures worked out by hand for the fixture and against a hand join of nsmcore.route."""

from __future__ import annotations

import pytest

from adjudication.evaluation.figures import (
    EvaluationRequestError,
    Options,
    evaluation_passes,
    options_from,
    pass_evaluation,
    pass_items,
    pass_named,
)
from adjudication.models import GoldItem
from annotator.models import Assignment, ItemSet
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit
from nsmcore.mapper import route
from rules.rulesets import active_rule_set, packaged_rule_set
from tests.adjudication.evaluation_fixture import (
    ALICE,
    BOB,
    GOLD,
    GUILT,
    LABELS,
    PARSER,
    make_evaluation_round,
)

FEW = Options(orders=40, seed=3)


@pytest.fixture
def round_(annotator, other_annotator, adjudicator):
    return make_evaluation_round(annotator, other_annotator, adjudicator)


def hand_join(passes: dict[str, dict | None]) -> dict[str, tuple[int, int]]:
    """accuracy, abstention and selective accuracy as (k, n), from nsmcore.route per item joined
    with the items' reference labels by id."""
    routed = {sid: route(explication) for sid, explication in passes.items()}
    n = len(routed)
    correct = sum(r.label == LABELS[sid] for sid, r in routed.items())
    abstained = sum(r.abstention_type is not None for r in routed.values())
    return {"accuracy": (correct, n), "abstention": (abstained, n), "selective": (correct, n - abstained)}


def figures(evaluation) -> dict[str, tuple[int, int]]:
    h = evaluation.report.headline
    return {
        "accuracy": (h.accuracy.k, h.accuracy.n),
        "abstention": (h.abstention.k, h.abstention.n),
        "selective": (h.selective_accuracy.k, h.selective_accuracy.n),
    }


def test_a_round_lists_its_annotators_parsers_and_gold_as_passes(round_):
    assert [p.key for p in evaluation_passes(round_)] == [
        "annotator:alice",
        "annotator:bob",
        "parser:lex",
        "gold",
    ]


@pytest.mark.parametrize(
    ("key", "explications", "expected"),
    [
        ("annotator:alice", ALICE, {"accuracy": (4, 6), "abstention": (1, 6), "selective": (4, 5)}),
        ("annotator:bob", BOB, {"accuracy": (3, 6), "abstention": (1, 6), "selective": (3, 5)}),
        ("gold", GOLD, {"accuracy": (5, 6), "abstention": (0, 6), "selective": (5, 6)}),
        ("parser:lex", PARSER, {"accuracy": (1, 3), "abstention": (1, 3), "selective": (1, 2)}),
    ],
)
def test_each_pass_gives_the_figures_of_a_hand_join_of_route(round_, key, explications, expected):
    evaluation = pass_evaluation(round_, key, options=FEW)
    assert figures(evaluation) == expected == hand_join(explications)
    ev = evaluation.report.evidence
    assert (ev.tier, ev.n, ev.rule_set_version) == ("S", expected["accuracy"][1], active_rule_set().version)
    assert ev.pass_name == f"eval-round/{key}"
    assert ev.rule_set_hash == active_rule_set().content_hash


def test_abstentions_are_told_apart_by_type(round_):
    by_type = {
        key: {
            t: p.k
            for t, p in pass_evaluation(round_, key, options=FEW).report.headline.abstention_by_type.items()
        }
        for key in ("annotator:alice", "annotator:bob", "parser:lex")
    }
    assert by_type["annotator:alice"] == {"illegal": 0, "schema-residue": 1, "no-rule": 0}
    assert by_type["annotator:bob"] == {"illegal": 0, "schema-residue": 0, "no-rule": 1}
    assert by_type["parser:lex"] == {"illegal": 1, "schema-residue": 0, "no-rule": 0}


def test_confusion_flows_and_overrides_come_from_the_passes_values(round_):
    report = pass_evaluation(round_, "annotator:alice", options=FEW).report
    c = report.confusion
    counts = {
        (r, col): n
        for r, row in zip(c.rows, c.counts, strict=True)
        for col, n in zip(c.columns, row, strict=True)
    }
    assert counts[("guilt", "guilt")] == 1 and counts[("guilt", "shame")] == 1  # e1 right, e5 to shame
    assert counts[("shame", "shame")] == 1 and counts[("shame", "abstain")] == 1  # e6: residue
    assert sum(c.counts[c.rows.index("anger")]) == 1
    assert [(f.gold, f.routed, f.n) for f in report.flows.flows] == [("guilt", "shame", 1)]
    assert {(o.winner, o.overruled): o.n for o in report.multi_rule.overrides}[("shame", "guilt")] == 2


def test_gold_is_scored_on_construal_1_and_a_second_construal_counts_as_two_construals(round_):
    report = pass_evaluation(round_, "gold", options=FEW).report
    assert report.flag_rates.flags["two-construals"].k == 1
    # e5's first construal is guilt (right); its second (shame) would be wrong
    assert (
        report.per_emotion.rows[[r.emotion for r in report.per_emotion.rows].index("guilt")].accuracy.k == 2
    )


def test_an_open_gold_item_is_left_out_of_the_gold_pass(round_):
    GoldItem.objects.filter(round=round_, item__source_id="e6").update(status=GoldItem.Status.OPEN)
    items = pass_items(round_, pass_named(round_, "gold"))
    assert sorted(i["id"] for i in items) == ["e1", "e2", "e3", "e4", "e5"]


def test_the_parser_pass_reads_each_items_newest_prediction(round_):
    items = {i["id"]: i for i in pass_items(round_, pass_named(round_, "parser:lex"))}
    assert items["e1"]["explication"] != GUILT  # v0's guilt is older than v1's pride
    assert items["e2"]["explication"] is None


def test_the_random_orders_strip_matches_the_reports_min_mean_and_max(round_):
    evaluation = pass_evaluation(round_, "annotator:alice", options=Options(orders=60, seed=7))
    s = evaluation.report.sensitivity
    assert len(evaluation.order_accuracies) == 60
    assert min(evaluation.order_accuracies) == pytest.approx(s.random_min)
    assert max(evaluation.order_accuracies) == pytest.approx(s.random_max)
    assert sum(evaluation.order_accuracies) / 60 == pytest.approx(s.random_mean)
    assert [o.name for o in s.swaps] == ["guilt<->shame"]
    # swapping guilt ahead of shame turns e5 (guilt, SHAME values) right and e2 (shame) wrong
    assert s.swaps[0].accuracy.k == 4


def test_an_item_set_restricts_the_items_and_names_the_tier(round_):
    items = [
        a.item
        for a in Assignment.objects.filter(round=round_, annotator__username="alice").order_by(
            "item__source_id"
        )
    ]
    subset = item_set_from_items(name="eval-H2", items=items[:2], tier=ItemSet.Tier.HUMAN)
    evaluation = pass_evaluation(round_, "annotator:alice", options=FEW, item_set=subset)
    assert (evaluation.report.evidence.tier, evaluation.report.evidence.n) == ("H", 2)
    assert evaluation.item_set == "eval-H2"


def test_a_pass_without_items_in_the_item_set_has_no_report(round_):
    other = item_set_from_items(name="empty-set", items=[], tier=ItemSet.Tier.EVAL)
    evaluation = pass_evaluation(round_, "annotator:alice", options=FEW, item_set=other)
    assert evaluation.report is None and evaluation.items == 0


def test_a_new_submission_is_seen_through_the_cache(round_, annotator):
    before = pass_evaluation(round_, "annotator:alice", options=FEW)
    assert before.report.headline.accuracy.k == 4
    assignment = Assignment.objects.get(round=round_, annotator=annotator, item__source_id="e5")
    annotation_submit(assignment=assignment, user=annotator, values=GUILT, base_version=1)
    after = pass_evaluation(round_, "annotator:alice", options=FEW)
    assert after.report.headline.accuracy.k == 5


def test_a_bad_pass_key_names_it_and_the_rounds_passes(round_):
    with pytest.raises(
        EvaluationRequestError, match=r"pass 'annotator:zoe' is not a pass of round eval-round; .*gold"
    ):
        pass_evaluation(round_, "annotator:zoe")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"orders": "many"}, "orders must be a whole number"),
        ({"orders": "6000"}, "orders must be between 0 and 5000"),
        ({"seed": "-1"}, "seed must be between"),
        ({"decay": "0"}, r"decay must be in \(0, 1\]"),
        ({"decay": "x"}, "decay must be a number"),
        ({"swap": ["guilt"]}, "swap 'guilt': expected two different emotions"),
        ({"swap": ["guilt:elation"]}, "'elation' is not a rule"),
    ],
)
def test_bad_options_name_the_parameter(params, message):
    with pytest.raises(EvaluationRequestError, match=message):
        options_from(params, packaged_rule_set())


def test_options_default_to_a_thousand_orders_and_the_guilt_shame_swap():
    options = options_from({}, packaged_rule_set())
    assert (options.orders, options.seed, options.swaps, options.decay) == (
        1000,
        0,
        (("guilt", "shame"),),
        0.5,
    )
