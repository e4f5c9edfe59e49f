"""Control items never enter anything computed about the round: each test here fails without
its ``control=False`` filter in the lower app's selector.

The round "target" has eight items of its own; fay and gus each have the gold round's four items
as controls. Both keep the prefill on their own items; on the controls gus says
agency=someone-else, so controls counted as the round's work would show as conflicts."""

import pytest

from adjudication.agreement.analysis import (
    PARSER,
    Pass,
    anchoring,
    blind_controls,
    pass_rows,
    passes_for,
    round_analysis,
    round_submissions,
    round_table,
)
from adjudication.evaluation.figures import ANNOTATOR, EvalPass, evaluation_passes, pass_items
from adjudication.gold.services import gold_sync
from adjudication.models import GoldItem
from adjudication.training import training_data
from annotator.models import Assignment
from annotator.round_selectors import round_annotators, rounds_with_progress
from exports.raw_export import raw_rows
from quality.services import controls_add
from tests.quality.conftest import make_round, submit_all

pytestmark = pytest.mark.django_db

DIFF = {"agency": "someone-else"}


@pytest.fixture
def done(with_controls, fay, gus):
    submit_all(with_controls, fay)
    submit_all(with_controls, gus, controls=False)
    submit_all(with_controls, gus, real=False, diff=DIFF)
    return with_controls


def real_ids(round_) -> set[int]:
    return set(round_.item_set.members.values_list("item_id", flat=True))


def control_ids(round_) -> set[int]:
    return set(Assignment.objects.filter(round=round_, control=True).values_list("item_id", flat=True))


def test_the_fixture_has_controls_in_both_queues(done):
    assert len(control_ids(done)) == 4 and not control_ids(done) & real_ids(done)
    assert Assignment.objects.filter(round=done, control=True, status="done").count() == 8


# agreement, conflicts, gold queue (adjudication.agreement.analysis.round_table)


def test_agreement_and_conflicts_read_only_the_rounds_items(done):
    assert set(round_table(done.pk).item_ids.tolist()) == real_ids(done)
    analysis = round_analysis(done)
    assert analysis.report.items == 8
    assert len(analysis.conflicts) == 0  # the controls disagree on agency


def test_the_gold_queue_opens_only_the_rounds_items(done):
    gold_sync(done)
    assert set(GoldItem.objects.filter(round=done).values_list("item_id", flat=True)) == real_ids(done)


# progress counts (analysis.round_submissions, agreement.views.rounds, round_selectors)


def test_submissions_do_not_count_controls(with_controls, fay):
    submit_all(with_controls, fay, real=False)
    assert round_submissions(with_controls).done == 0


def test_the_adjudication_rounds_list_counts_only_the_rounds_work(client, adjudicator, done):
    client.force_login(adjudicator)
    response = client.get("/adjudicate/")
    row = next(r for r in response.context["rows"] if r["round"].pk == done.pk)
    assert (row["done"], row["total"]) == (16, 16)


def test_the_admins_round_lists_count_only_the_rounds_work(with_controls, fay):
    submit_all(with_controls, fay, real=False)
    row = next(r for r in rounds_with_progress() if r.round.pk == with_controls.pk)
    assert (row.progress.assigned, row.progress.done) == (16, 0)
    mine = next(r for r in round_annotators(with_controls) if r.user.username == "fay")
    assert (mine.progress.assigned, mine.progress.done, mine.progress.pending) == (8, 0, 8)


def test_the_conflict_item_page_does_not_show_a_control(client, adjudicator, done):
    client.force_login(adjudicator)
    control = min(control_ids(done))
    assert client.get(f"/adjudicate/rounds/{done.pk}/items/{control}/").status_code == 404
    assert client.get(f"/adjudicate/rounds/{done.pk}/items/{min(real_ids(done))}/").status_code == 200


# passes, flows and anchoring (analysis.passes_for, pass_rows, anchoring, blind_controls)


def test_an_annotator_with_only_controls_done_is_no_pass(with_controls, fay, gus):
    submit_all(with_controls, fay, real=False)
    submit_all(with_controls, gus, controls=False)
    whose = {p.who for p in passes_for(with_controls) if p.round_id == with_controls.pk}
    assert whose == {str(gus.pk), PARSER}


def test_a_pass_holds_only_the_rounds_items(done, gus):
    rows = pass_rows(Pass(done.pk, done.name, str(gus.pk)))
    assert set(rows) == real_ids(done)
    parser = pass_rows(Pass(done.pk, done.name, PARSER))
    assert set(parser) == real_ids(done)


def test_anchoring_counts_only_the_rounds_items(done):
    rows = {r.annotator: r for r in anchoring(done)}
    assert rows["gus"].annotations == 8
    assert rows["gus"].overall == 1.0  # the controls, where gus changed agency, are not read


def test_a_blind_round_is_no_control_arm_through_its_control_items(gold_round, fay, gus):
    blind = make_round("blind-controls", [fay, gus], mode="blind")
    controls_add(round_=blind, control_rate=0.125)
    submit_all(blind, fay, real=False)
    assert blind_controls(gold_round) == []


def test_a_rounds_control_items_make_no_blind_control_arm(target, blind_round, annotator, fay):
    """target's controls are the gold round's items, which the blind round shares."""
    controls_add(round_=target, control_rate=0.125)
    submit_all(target, fay, real=False)
    submit_all(blind_round, annotator)
    assert blind_controls(target) == []


# evaluation (adjudication.evaluation.figures)


def test_an_annotator_with_only_controls_done_is_no_evaluation_pass(with_controls, fay, gus):
    submit_all(with_controls, fay, real=False)
    submit_all(with_controls, gus, controls=False)
    assert [p.key for p in evaluation_passes(with_controls) if p.kind == ANNOTATOR] == ["annotator:gus"]


def test_an_evaluation_on_another_item_set_never_reads_controls(done, gold_round):
    p = EvalPass("annotator:gus", ANNOTATOR, "gus")
    assert pass_items(done, p, item_set=gold_round.item_set) == []
    assert len(pass_items(done, p)) == 8


# parser training sets (adjudication.training)


def test_an_annotator_pass_trains_on_the_rounds_items_only(done):
    source = training_data(round_=done, passes="annotator:gus")
    assert {r.id for r in source.records} == {f"target{k}" for k in range(8)}


# exports (exports.raw_export; the gold export reads gold records and round_table)


def test_the_raw_export_leaves_controls_out(done):
    rows = [row for chunk in raw_rows(done) for row in chunk]
    assert len(rows) == 16
    assert {row["item_id"] for row in rows} == real_ids(done)
