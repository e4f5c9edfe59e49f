"""Abandoned work: an assignment opened and left with no draft and no save for the round's limit
goes to the eligible member of the pool with the fewest pending assignments (ties by name)."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator.models import AnnotationDraft, Assignment
from annotator.roles import ANNOTATOR
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from quality.abandoned import abandoned_sweep
from quality.models import Move, Opening
from quality.services import QualityError, controls_add, quality_settings_set
from quality.tasks import AbandonedSweeper
from tests.conftest import _user
from tests.factories import PRED
from tests.quality.conftest import make_round, own_items, queue

pytestmark = pytest.mark.django_db


@pytest.fixture
def hal(db):
    return _user("hal", ANNOTATOR)


@pytest.fixture
def three(fay, gus, hal):
    """Nine items, one annotator each: three in each queue."""
    item_set = item_set_from_items(name="set-three", items=own_items("three", 9))
    return round_create(
        name="three", item_set=item_set, annotators=[fay, gus, hal], mode="prefilled",
        prefill_parser="lex", annotators_per_item=1,
    )  # fmt: skip


def open_page(client, user, assignment):
    """What a browser does: load the page, whose script then posts that it was opened (the GET
    itself writes nothing)."""
    client.force_login(user)
    response = client.get(f"/work/a/{assignment.pk}/")
    assert response.status_code == 200
    opened = f"/work/a/{assignment.pk}/opened/"
    assert f'hx-post="{opened}" hx-trigger="load"' in response.content.decode()
    assert client.post(opened).status_code == 204
    return response


def backdate(assignment, hours: float) -> None:
    then = timezone.now() - timedelta(hours=hours)
    Opening.objects.filter(assignment=assignment).update(opened_at=then, active_at=then)


def test_opening_the_page_records_an_opening_and_each_visit_is_activity(client, three, fay):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    opening = Opening.objects.get(assignment=a)
    assert opening.annotator == fay and opening.opened_at == opening.active_at
    backdate(a, 30)
    open_page(client, fay, a)
    again = Opening.objects.get(assignment=a)
    assert again.opened_at < timezone.now() - timedelta(hours=29)  # the first opening is kept
    assert again.active_at > timezone.now() - timedelta(minutes=1)


def test_keeping_a_draft_is_activity(client, three, fay):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 30)
    response = client.post(f"/work/a/{a.pk}/draft/", {**PRED, "base_version": 0})
    assert response.status_code == 204
    assert Opening.objects.get(assignment=a).active_at > timezone.now() - timedelta(minutes=1)
    assert abandoned_sweep().moved == {}


def test_a_save_touches_no_opening_since_saved_work_is_never_moved(client, three, fay):
    """Each submit had updated its opening's activity, a query on the load's hot path that
    changed nothing: the sweep moves only assignments with no annotation."""
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 30)
    with CaptureQueriesContext(connection) as ctx:
        annotation_submit(assignment=a, user=fay, values=PRED, base_version=0)
    assert not [q["sql"] for q in ctx.captured_queries if "quality_opening" in q["sql"]]
    assert abandoned_sweep().moved == {}
    assert Assignment.objects.get(pk=a.pk).annotator == fay


def test_an_abandoned_assignment_goes_to_the_least_loaded_by_name(client, three, fay, gus, hal):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    client.post(f"/work/a/{a.pk}/draft/", {**PRED, "base_version": 0})
    backdate(a, 25)
    result = abandoned_sweep()
    assert result.moved == {"three": 1}
    a.refresh_from_db()
    assert a.annotator == gus  # gus and hal have three pending each: gus by name
    assert [x.position for x in queue(three, gus)] == [0, 1, 2, 3] and queue(three, gus)[-1].pk == a.pk
    assert [x.position for x in queue(three, fay)] == [0, 1]  # fay's queue closed up
    assert not AnnotationDraft.objects.filter(assignment=a).exists()  # the draft was fay's
    move = Move.objects.get()
    assert (move.from_annotator, move.to_annotator, move.item_id, move.hours) == (fay, gus, a.item_id, 24)
    assert move.draft_deleted and move.by is None
    assert move.idle_since < timezone.now() - timedelta(hours=24)
    assert client.get(f"/work/a/{a.pk}/").status_code == 404  # not fay's any more
    assert abandoned_sweep().moved == {}  # gus has not opened it: nothing more to do


def test_an_item_given_back_to_its_first_annotator_waits_for_them_to_open_it(client, three, fay, gus, hal):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 25)
    abandoned_sweep()  # to gus (three pending, as hal, first by name)
    open_page(client, gus, Assignment.objects.get(pk=a.pk))
    backdate(a, 25)
    abandoned_sweep()  # back to fay, who has two pending now
    a.refresh_from_db()
    assert a.annotator == fay and Move.objects.count() == 2
    assert abandoned_sweep().moved == {}  # fay has not opened it since


def test_the_fewest_pending_assignments_win(client, three, fay, gus, hal):
    annotation_submit(assignment=queue(three, hal)[0], user=hal, values=PRED, base_version=0)
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 25)
    abandoned_sweep()
    a.refresh_from_db()
    assert a.annotator == hal


def test_nothing_moves_before_the_limit_nor_when_the_round_says_never(client, three, fay):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 23)
    assert abandoned_sweep().moved == {}
    assert abandoned_sweep(hours=22).moved == {"three": 1}  # a shorter limit, given


def test_a_round_whose_limit_is_zero_keeps_its_work(client, three, fay):
    quality_settings_set(round_=three, user=None, abandon_hours=0)
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 1000)
    assert abandoned_sweep().moved == {}
    a.refresh_from_db()
    assert a.annotator == fay


def test_done_work_is_never_moved(client, three, fay):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    annotation_submit(assignment=a, user=fay, values=PRED, base_version=0)
    backdate(a, 100)
    assert abandoned_sweep().moved == {}


def test_never_to_someone_who_has_the_item_in_the_round(client, target, fay):
    """target gives every item to both fay and gus: nobody else may take fay's."""
    a = queue(target, fay)[0]
    open_page(client, fay, a)
    backdate(a, 25)
    result = abandoned_sweep()
    assert result.moved == {} and result.stuck == {"target": 1}
    a.refresh_from_db()
    assert a.annotator == fay and not Move.objects.exists()


def test_a_blind_item_never_goes_to_someone_who_saw_it_prefilled(client, fay, gus, hal):
    items = own_items("seen", 3)
    blind = round_create(
        name="blind-seen", item_set=item_set_from_items(name="set-blind-seen", items=items),
        annotators=[fay, gus, hal], annotators_per_item=1,
    )  # fmt: skip
    a = queue(blind, fay)[0]
    round_create(
        name="prefilled-seen", item_set=item_set_from_items(name="set-prefilled-seen", items=[a.item]),
        annotators=[gus], annotators_per_item=1, mode="prefilled", prefill_parser="lex",
        allow_prefill_overlap=True,
    )  # fmt: skip
    open_page(client, fay, a)
    backdate(a, 25)
    abandoned_sweep()
    a.refresh_from_db()
    assert a.annotator == hal  # gus has as few pending, and comes first by name, but saw it prefilled


def test_a_control_never_goes_to_someone_who_had_its_item_anywhere(client, gold_round, annotator, fay, gus):
    """alice annotated the control's item in the gold round."""
    round_ = make_round("controlled", [fay, gus, annotator])
    round_.pool.remove(gus)  # only alice is left to take fay's work
    controls_add(round_=round_, control_rate=0.1)
    control = next(x for x in queue(round_, fay) if x.control)
    open_page(client, fay, control)
    backdate(control, 25)
    result = abandoned_sweep(round_=round_)
    assert result.stuck == {"controlled": 1}
    control.refresh_from_db()
    assert control.annotator == fay


@pytest.mark.django_db(transaction=True)  # the sweeper gives its connection back after each round
def test_the_worker_sweeper_sweeps(client, three, fay):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 25)
    AbandonedSweeper(600).sweep()
    a.refresh_from_db()
    assert a.annotator.username == "gus"


@pytest.mark.django_db(transaction=True)
def test_the_worker_sweeper_survives_a_failed_round(monkeypatch, caplog):
    def fail():
        raise RuntimeError("database away")

    monkeypatch.setattr("quality.tasks.abandoned_sweep", fail)
    assert AbandonedSweeper(600).sweep() == []
    assert "could not look for abandoned assignments" in caplog.text


def test_the_sweep_interval_is_a_setting(settings):
    from quality.tasks import sweep_seconds

    assert sweep_seconds() == 600
    settings.NSM_QUALITY_SWEEP_SECONDS = 60
    assert sweep_seconds() == 60


def test_the_command_sweeps_with_a_limit_of_its_own(client, three, fay):
    a = queue(three, fay)[0]
    open_page(client, fay, a)
    backdate(a, 2)
    out = StringIO()
    call_command("quality", "sweep", "--hours", "1", stdout=out)
    assert "1 abandoned assignments moved back to the pool (three 1)" in out.getvalue()
    a.refresh_from_db()
    assert a.annotator.username == "gus"


@pytest.mark.parametrize("hours", ["0", "99999"])
def test_the_command_refuses_a_bad_limit(three, hours):
    with pytest.raises(CommandError) as refused:
        call_command("quality", "sweep", "--hours", hours)
    assert refused.value.returncode == 2 and "hours" in str(refused.value)


def test_a_bad_limit_is_refused_by_name():
    with pytest.raises(QualityError) as refused:
        abandoned_sweep(hours=True)
    assert refused.value.field == "hours"


def test_the_opening_is_posted_not_written_by_the_get_and_only_by_its_annotator(client, target, fay, gus):
    a = queue(target, fay)[0]
    client.force_login(fay)
    assert client.get(f"/work/a/{a.pk}/").status_code == 200
    assert not Opening.objects.exists()  # showing the page wrote nothing
    assert client.get(f"/work/a/{a.pk}/opened/").status_code == 405
    client.force_login(gus)
    assert client.post(f"/work/a/{a.pk}/opened/").status_code == 404  # not gus's
    assert not Opening.objects.exists()
    client.force_login(fay)
    assert client.post(f"/work/a/{a.pk}/opened/").status_code == 204
    assert Opening.objects.filter(assignment=a, annotator=fay).count() == 1
