"""Each event the tool sends reaches a local receiver once per delivery, signed, with the headers
docs/webhooks.md names; a hook gets only the events it asked for, and a write that rolls back
sends nothing."""

from __future__ import annotations

import json
import time

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from adjudication.gold.services import convention_propose, convention_vote, gold_resolve, gold_sync
from adjudication.models import GoldItem
from adjudication.rule_revisions.services import revision_activate, revision_propose
from annotator.imports import items_import
from annotator.models import Assignment
from annotator.services import annotation_submit
from exports.export import export_start
from jobs.services import job_run
from tests.explications import PRED
from tests.rules.data import moved
from webhooks.models import Delivery
from webhooks.services import webhook_create, webhook_delete, webhook_update
from webhooks.signing import signature, signature_valid

pytestmark = pytest.mark.django_db


def check_signed(received, hook, delivery: Delivery) -> None:
    """The headers a receiver reads, and a signature it can check with the hook's secret."""
    h = received.headers
    assert h["Content-Type"] == "application/json"
    assert h["X-NSM-Event"] == delivery.event
    assert h["X-NSM-Delivery"] == str(delivery.pk)
    assert abs(int(h["X-NSM-Timestamp"]) - time.time()) < 60
    assert h["X-NSM-Signature"] == signature(hook.secret, h["X-NSM-Timestamp"], received.body)
    assert signature_valid(hook.secret, h["X-NSM-Timestamp"], received.body, h["X-NSM-Signature"])
    assert not signature_valid("whsec_other", h["X-NSM-Timestamp"], received.body, h["X-NSM-Signature"])
    assert received.body == delivery.body
    assert received.json["event"] == delivery.event and received.json["payload"] == delivery.payload


def delivered_once(receiver, hook, work, event: str) -> dict:
    """Run the worker; the event's one delivery arrived once, signed. Returns its payload."""
    work()
    delivery = Delivery.objects.get(webhook=hook, event=event)
    assert delivery.state == "delivered" and delivery.attempts == 1 and delivery.status_code == 200
    arrived = [r for r in receiver.received if r.headers["X-NSM-Event"] == event]
    assert len(arrived) == 1
    check_signed(arrived[0], hook, delivery)
    return arrived[0].json["payload"]


def test_gold_resolved_arrives_once_signed(
    hook, receiver, queued, work, submitted, adjudicator, django_capture_on_commit_callbacks
):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    with django_capture_on_commit_callbacks(execute=True):
        gold_resolve(user=adjudicator, gold=gold, values={"agency": "i"}, why="the writer acts")
    assert len(queued) == 1 and receiver.received == []  # queued for the worker, not sent
    payload = delivered_once(receiver, hook, work, "gold.resolved")
    assert payload["gold"] == gold.pk and payload["item"] == gold.item_id and payload["round"] == submitted.pk
    assert payload["by"] == "carol" and payload["slots"]["agency"] == "i" and payload["label"]
    # the same message twice (a broker hands it out again): sent once all the same
    queued.append((Delivery.objects.get(event="gold.resolved").pk, 1))
    work()
    assert receiver.events() == ["gold.resolved"]


def test_items_imported(hook, receiver, work, django_capture_on_commit_callbacks):
    rows = [
        {"text_id": f"w{i}", "emotion": "joy", "text": "I was glad.", "masked_text": "I was ..."}
        for i in (1, 2)
    ]
    data = "\n".join(json.dumps(r) for r in rows)
    with django_capture_on_commit_callbacks(execute=True):
        items_import(data=data, fmt="jsonl", source="hooked")
    assert delivered_once(receiver, hook, work, "item_set.imported") == {
        "source": "hooked",
        "rows": 2,
        "created": 2,
    }
    with django_capture_on_commit_callbacks(execute=True):  # the same file again creates nothing
        items_import(data=data, fmt="jsonl", source="hooked")
    assert Delivery.objects.filter(event="item_set.imported").count() == 1


def test_round_completed_once_when_its_last_assignment_is_done(
    hook, receiver, work, prefilled_round, annotator, other_annotator, django_capture_on_commit_callbacks
):
    assignments = list(Assignment.objects.filter(round=prefilled_round).order_by("annotator_id", "item_id"))
    assert len(assignments) == 8
    with django_capture_on_commit_callbacks(execute=True):
        for a in assignments[:-1]:
            annotation_submit(assignment=a, user=a.annotator, values=PRED, base_version=0)
    assert not Delivery.objects.exists()  # one assignment is still to do
    last = assignments[-1]
    with django_capture_on_commit_callbacks(execute=True):
        annotation_submit(assignment=last, user=last.annotator, values=PRED, base_version=0)
    payload = delivered_once(receiver, hook, work, "round.completed")
    assert payload == {"round": prefilled_round.pk, "name": "prefilled", "assignments": 8}
    # a revision of a done item changes no count: no second event
    last.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        annotation_submit(
            assignment=last, user=last.annotator, values={**PRED, "intensity": "very"}, base_version=1
        )
    assert Delivery.objects.filter(event="round.completed").count() == 1


def test_convention_decided(
    hook, receiver, work, submitted, adjudicator, other_adjudicator, django_capture_on_commit_callbacks
):
    convention = convention_propose(
        user=adjudicator,
        slot="agency",
        value_a="i",
        value_b="someone-else",
        chosen="i",
        rule="the writer",
        round_=submitted,
    )
    with django_capture_on_commit_callbacks(execute=True):
        convention_vote(user=adjudicator, convention=convention, approve=True)
    assert not Delivery.objects.exists()  # one vote: not decided yet
    with django_capture_on_commit_callbacks(execute=True):
        convention_vote(user=other_adjudicator, convention=convention, approve=True)
    payload = delivered_once(receiver, hook, work, "convention.decided")
    assert payload == {
        "convention": convention.pk,
        "status": "accepted",
        "label": "C1 v1",
        "slot": "agency",
        "chosen": "i",
    }


def test_rule_set_activated(
    hook, receiver, work, adjudicator, admin_user, django_capture_on_commit_callbacks
):
    version = revision_propose(user=adjudicator, document=moved("no-emotion", 0))
    with django_capture_on_commit_callbacks(execute=True):
        revision_activate(user=admin_user, version=version)
    payload = delivered_once(receiver, hook, work, "rule_set.activated")
    assert payload["version"] == "2" and payload["previous"] == "1" and payload["how"] == "admin"
    assert payload["hash"] == version.content_hash


def test_export_ready_and_job_finished(
    hook, receiver, work, gold_round, admin_user, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    job = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        job_run(job.pk)
    ready = delivered_once(receiver, hook, work, "export.ready")
    finished = delivered_once(receiver, hook, work, "job.finished")
    export = job.export
    assert ready == {
        "export": export.pk, "kind": "emoexpl", "job": job.pk, "round": gold_round.pk,
        "file": export.filename, "sha256": export.sha256,
    }  # fmt: skip
    assert finished == {"job": job.pk, "kind": "export", "status": "done", "error": ""}


def test_a_hook_gets_only_its_events_and_an_inactive_one_none(
    admin_user, receiver, work, submitted, adjudicator, django_capture_on_commit_callbacks
):
    wants_gold = webhook_create(user=admin_user, url=receiver.url, events=["gold.resolved"])
    webhook_create(user=admin_user, url=receiver.url, events=["export.ready", "round.completed"])
    webhook_create(user=admin_user, url=receiver.url, events=["*"], active=False)
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    with django_capture_on_commit_callbacks(execute=True):
        gold_resolve(user=adjudicator, gold=gold, values={"agency": "i"}, why="the writer acts")
    assert list(Delivery.objects.values_list("webhook", "event")) == [(wants_gold.pk, "gold.resolved")]
    work()
    assert receiver.events() == ["gold.resolved"]


def test_a_write_that_rolls_back_sends_nothing(
    hook, submitted, adjudicator, queued, django_capture_on_commit_callbacks
):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        gold_resolve(user=adjudicator, gold=gold, values={"agency": "i"}, why="the writer acts")
        raise RuntimeError("the caller fails after it")
    assert not Delivery.objects.exists() and queued == []


def _submit_queries(assignment, commit) -> list[str]:
    with CaptureQueriesContext(connection) as ctx, commit():
        annotation_submit(assignment=assignment, user=assignment.annotator, values=PRED, base_version=0)
    return [q["sql"] for q in ctx.captured_queries]


def test_a_submit_asks_whether_the_round_is_complete_only_when_a_hook_listens(
    prefilled_round, admin_user, receiver, commit
):
    """The 50-annotator load: each submit had paid a query for round.completed that no hook
    wanted. Without such a hook it asks nothing; a hook made, changed or deleted is seen at once."""
    first, second, third, fourth = Assignment.objects.filter(round=prefilled_round).order_by("pk")[:4]
    quiet = _submit_queries(first, commit)
    hook = webhook_create(user=admin_user, url=receiver.url, events=["gold.resolved"])
    assert len(_submit_queries(second, commit)) == len(quiet)  # a hook for other events only
    webhook_update(webhook=hook, events=["round.completed"])
    listened = _submit_queries(third, commit)
    assert len(listened) == len(quiet) + 1, listened[len(quiet) :]
    webhook_delete(webhook=hook)
    assert len(_submit_queries(fourth, commit)) == len(quiet)


def test_what_another_process_cached_while_a_hook_changed_is_forgotten_at_the_commit(
    admin_user, receiver, commit
):
    from django.core.cache import cache

    from webhooks.selectors import EVENTS_KEY, event_listened

    hook = webhook_create(user=admin_user, url=receiver.url, events=["gold.resolved"])
    with commit():
        webhook_update(webhook=hook, events=["round.completed"])
        cache.set(EVENTS_KEY, frozenset({"gold.resolved"}))  # read before the commit, elsewhere
    assert event_listened("round.completed") and not event_listened("gold.resolved")
