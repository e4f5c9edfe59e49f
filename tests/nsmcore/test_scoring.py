import math

import pytest

from nsmcore.mapper import load_rule_set
from nsmcore.schema import Explication
from nsmcore.scoring import distribution, pivotal_slots, ranked, score

LABELS = load_rule_set().emotions
K, A = 13, 0.05


def p_of(q: float) -> float:
    return (q + A) / (1 + K * A)


def test_priority_decay_halves_weight_per_fired_rule_then_smooths():
    p = distribution(["pride", "joy"], LABELS)
    assert p[LABELS.index("pride")] == pytest.approx(p_of(2 / 3))
    assert p[LABELS.index("joy")] == pytest.approx(p_of(1 / 3))
    assert p[LABELS.index("fear")] == pytest.approx(p_of(0))
    assert p.sum() == pytest.approx(1.0)


def test_decay_base_is_a_parameter():
    p = distribution(["shame", "guilt", "joy"], LABELS, decay=0.25)
    w = [1, 0.25, 0.0625]
    assert p[LABELS.index("guilt")] == pytest.approx(p_of(0.25 / sum(w)))


def test_single_winner_and_uniform_fired():
    single = distribution(["pride", "joy"], LABELS, scheme="single-winner")
    assert single[LABELS.index("pride")] == pytest.approx(p_of(1))
    assert single[LABELS.index("joy")] == pytest.approx(p_of(0))
    uniform = distribution(["pride", "joy"], LABELS, scheme="uniform-fired")
    assert uniform[LABELS.index("pride")] == pytest.approx(p_of(0.5))
    assert uniform[LABELS.index("joy")] == pytest.approx(p_of(0.5))


def test_empty_fired_set_is_uniform():
    assert distribution([], LABELS) == pytest.approx([1 / 13] * 13)


def test_ties_are_broken_by_rule_priority():
    assert ranked(distribution([], LABELS), LABELS)[:3] == ["relief", "surprise", "fear"]


def test_score_reports_nll_brier_top1_top3_coverage_and_set_accuracy():
    s = score([(["pride", "joy"], "joy"), ([], "fear")], LABELS)
    p_joy = p_of(1 / 3)
    assert s.nll == pytest.approx((-math.log(p_joy) - math.log(1 / 13)) / 2)
    brier_first = (p_of(2 / 3)) ** 2 + (p_joy - 1) ** 2 + 11 * p_of(0) ** 2
    brier_second = 12 / 169 + (12 / 13) ** 2
    assert s.brier == pytest.approx((brier_first + brier_second) / 2)
    assert (s.top1, s.top3, s.coverage, s.set_accuracy, s.n) == (0.0, 0.5, 0.5, 0.5, 2)
    # the empty set ranks fear third by priority: a hit only in the paper's convention
    assert (s.top1_uniform, s.top3_uniform) == (0.0, 1.0)


@pytest.mark.parametrize("scheme", ["single-winner", "uniform-fired", "priority-decay"])
def test_top1_never_exceeds_accuracy_when_abstentions_are_misses(scheme):
    # issue 26: an abstention whose reference is relief (rule 0) was a top-1 hit, so top-1 could
    # exceed accuracy; the routed label is the first fired, so top-1 is accuracy under every scheme
    records = [(["relief"], "relief", None), (["pride", "joy"], "joy", None), ([], "relief", "no-rule")]
    records += [(["shame", "guilt"], "relief", "residue"), (["fear"], "fear", None)]
    s = score(records, LABELS, scheme=scheme)
    accuracy = sum(1 for fired, gold, abstained in records if not abstained and fired[0] == gold) / 5
    assert s.top1 == pytest.approx(accuracy) == pytest.approx(2 / 5)
    assert s.top1_uniform == pytest.approx(4 / 5)  # both abstentions ranked relief first


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: distribution(["pride"], LABELS, scheme="argmax"), "unknown scheme"),
        (lambda: distribution(["elation"], LABELS), "not among the labels: elation"),
        (lambda: distribution(["joy"], LABELS, decay=0), "decay"),
        (lambda: score([(["joy"], "elation")], LABELS), "gold label 'elation'"),
        (lambda: score([], LABELS), "no records"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_pivotal_slots_are_the_slots_that_differ():
    a = Explication(evaluation="feel-bad", eval_target="self", agency="i")
    b = a.replace(others_know="can-know", intensity="very")
    assert pivotal_slots(a, b) == ("others_know", "intensity")
    assert pivotal_slots(a, a.replace(notes="other notes")) == ()


def test_an_abstained_item_is_not_covered_whatever_its_fired_set():
    # A residue-abstained item keeps its fired set (the mapper reports it) but the mapper made no
    # claim: it is scored as the empty set, so coverage is 1 - abstention rate.
    records = [
        (["pride", "joy"], "joy", "schema-residue"),
        (["shame", "guilt"], "shame", None),
        ([], "fear", "no-rule"),
    ]
    s = score(records, LABELS)
    assert s.coverage == pytest.approx(1 / 3)
    assert s.set_accuracy == pytest.approx(1 / 3)  # joy is in the residue item's fired set: not counted
    uniform = score([([], "joy")], LABELS)
    assert score([records[0]], LABELS).nll == pytest.approx(uniform.nll)
