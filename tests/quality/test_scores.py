"""Accuracy on control items, per annotator: per slot and routed label against gold construal 1,
with exact intervals; an alert below the threshold from enough answered controls.

The gold round's gold is the prefill (PRED, pride) on three items, and agency=someone-else
(routing to joy) on t2-0. fay answers PRED everywhere; gus answers agency=someone-else."""

import pytest

from annotator.models import Assignment
from nsmcore import clopper_pearson
from quality.selectors import control_alerts, control_progress, control_scores, quality_report
from quality.services import quality_settings_set
from tests.quality.conftest import submit_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def answered(with_controls, fay, gus):
    submit_all(with_controls, fay)
    submit_all(with_controls, gus, diff={"agency": "someone-else"})
    return with_controls


def test_accuracy_per_slot_and_routed_label_with_exact_intervals(answered):
    fay, gus = control_scores(answered)
    assert (fay.annotator, gus.annotator) == ("fay", "gus")
    assert (fay.assigned, fay.done, fay.answered, fay.pending) == (4, 4, 4, 0)
    assert (fay.slots["agency"].k, fay.slots["agency"].n) == (3, 4)
    assert all(fay.slots[s].k == 4 for s in fay.slots if s != "agency")
    assert (fay.routed.k, fay.routed.n) == (3, 4)  # t2-0's gold routes to joy, PRED to pride
    assert fay.routed.interval == pytest.approx(clopper_pearson(3, 4))
    assert fay.mean_slots == pytest.approx((11 + 0.75) / 12)
    assert (gus.slots["agency"].k, gus.routed.k) == (1, 1)
    assert gus.mean_slots == pytest.approx((11 + 0.25) / 12)
    assert control_progress([fay, gus]).done == 8


def test_no_alert_before_enough_controls_are_answered(answered):
    quality_settings_set(round_=answered, user=None, threshold=0.99)
    assert control_alerts(control_scores(answered)) == []  # four answered, five needed
    quality_settings_set(round_=answered, user=None, min_answered=4)
    assert [s.annotator for s in control_alerts(control_scores(answered))] == ["fay", "gus"]


def test_the_alert_reads_the_chosen_measure(answered):
    quality_settings_set(round_=answered, user=None, min_answered=4, threshold=0.95)
    assert [s.annotator for s in control_alerts(control_scores(answered))] == ["gus"]  # mean per slot
    quality_settings_set(round_=answered, user=None, measure="routed", threshold=0.5)
    scores = control_scores(answered)
    assert [s.annotator for s in control_alerts(scores)] == ["gus"]
    assert scores[1].measured == 0.25


def test_pending_controls_are_counted_but_not_scored(with_controls, fay):
    submit_all(with_controls, fay, controls=False)
    (score,) = control_scores(with_controls)[:1]
    assert (score.assigned, score.done, score.answered, score.routed.n) == (4, 0, 0, 0)
    assert score.mean_slots is None and not score.alert


def test_a_control_whose_gold_is_open_again_is_not_scored(answered, gold_round):
    from adjudication.models import GoldItem

    item = Assignment.objects.filter(round=answered, control=True).order_by("item_id").first().item_id
    GoldItem.objects.filter(item_id=item).update(status=GoldItem.Status.OPEN)
    fay = control_scores(answered)[0]
    assert (fay.done, fay.answered) == (4, 3)


def test_the_report_holds_everything_as_plain_data(answered):
    report = quality_report(answered)
    assert report["controls"] == {"assigned": 8, "done": 8, "skipped": 0, "pending": 0}
    assert report["annotators"][0]["routed"]["k"] == 3
    assert report["settings"]["control_rate"] == 0.5
    assert report["alerts"] == [] and report["moves"] == [] and report["nudges"] == []
