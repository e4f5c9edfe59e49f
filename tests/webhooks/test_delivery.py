"""Delivering: a receiver answering 500 is tried again on the backoff schedule (driven here with a
clock of the test's, no sleeping) until it answers or the retries are spent, every failure in the
log; a dead endpoint never makes the request that caused the event wait (the delivery is
published for the worker, even with CELERY_TASK_ALWAYS_EAGER); the signature's check."""

from __future__ import annotations

import base64
import json
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from adjudication.gold.services import gold_sync, gold_version
from adjudication.models import GoldItem
from webhooks.models import Delivery
from webhooks.services import (
    deliveries_send_due,
    delivery_attempt,
    delivery_redeliver,
    webhook_ping,
    webhook_update,
)
from webhooks.signing import signature, signature_valid

WAITS = (10, 60, 300, 1800, 7200)


def test_the_default_schedule_is_ten_seconds_to_two_hours():
    from webhooks import conf

    assert conf.retry_waits() == WAITS and conf.max_attempts() == 6
    assert (conf.connect_timeout(), conf.read_timeout()) == (3, 10)


@pytest.mark.django_db
def test_a_receiver_answering_500_is_retried_with_backoff_and_the_failures_are_logged(
    hook, receiver, queued, work, client, admin_user, commit
):
    receiver.answers = [500]
    with commit():
        ping = webhook_ping(webhook=hook)
    start = timezone.now()
    work()  # the first attempt, as the worker runs it
    ping.refresh_from_db()
    assert (ping.state, ping.attempts, ping.status_code, ping.error) == (
        "pending",
        1,
        500,
        "HTTP 500 Internal Server Error",
    )
    assert ping.response == '{"seen": 1}' and ping.duration_ms is not None
    assert start + timedelta(seconds=9) < ping.next_attempt_at <= timezone.now() + timedelta(seconds=10)

    clock = ping.next_attempt_at
    assert deliveries_send_due(now=clock - timedelta(seconds=1)) == []  # not due yet: nothing sent
    for attempt, wait in enumerate(WAITS[1:], start=2):
        sent = deliveries_send_due(now=clock)
        assert [d.pk for d in sent] == [ping.pk]
        ping.refresh_from_db()
        assert (ping.state, ping.attempts, ping.status_code) == ("pending", attempt, 500)
        assert ping.next_attempt_at == clock + timedelta(seconds=wait)
        clock = ping.next_attempt_at
    deliveries_send_due(now=clock)  # the sixth and last attempt
    ping.refresh_from_db()
    assert (ping.state, ping.attempts, ping.next_attempt_at) == ("failed", 6, None)
    assert len(receiver.received) == 6
    assert len({r.headers["X-NSM-Delivery"] for r in receiver.received}) == 1  # one delivery, six attempts
    assert deliveries_send_due(now=clock + timedelta(days=1)) == []

    client.force_login(admin_user)
    page = client.get(reverse("webhook", args=[hook.pk])).content.decode()
    row = page[page.index(f'data-delivery="{ping.pk}"') :]
    row = row[: row.index("</tr>")]
    assert 'data-state="failed"' in row and ">6<" in row and ">500<" in row
    assert "HTTP 500 Internal Server Error" in row


@pytest.mark.django_db
def test_a_receiver_that_recovers_gets_the_delivery_on_the_next_try(hook, receiver, queued, work, commit):
    receiver.answers = [503, 200]
    with commit():
        ping = webhook_ping(webhook=hook)
    work()
    ping.refresh_from_db()
    deliveries_send_due(now=ping.next_attempt_at)
    ping.refresh_from_db()
    assert (ping.state, ping.attempts, ping.status_code, ping.error) == ("delivered", 2, 200, "")
    assert ping.delivered_at is not None and ping.next_attempt_at is None
    # both attempts sent the same body, each signed with its own timestamp
    first, second = receiver.received
    assert first.body == second.body == ping.body
    for r in (first, second):
        assert r.headers["X-NSM-Signature"] == signature(hook.secret, r.headers["X-NSM-Timestamp"], r.body)


@pytest.mark.django_db
def test_send_again_makes_a_new_delivery_of_the_same_body(hook, receiver, queued, work, commit):
    with commit():
        ping = webhook_ping(webhook=hook)
    work()
    with commit():
        again = delivery_redeliver(delivery=Delivery.objects.get(pk=ping.pk))
    assert queued == [(again.pk, 1)]
    work()
    again.refresh_from_db()
    assert again.redelivery_of_id == ping.pk and again.body == ping.body and again.state == "delivered"
    assert [r.headers["X-NSM-Delivery"] for r in receiver.received] == [str(ping.pk), str(again.pk)]


@pytest.mark.django_db
def test_a_deactivated_hook_fails_its_pending_delivery_and_refuses_pings(
    hook, receiver, queued, work, commit
):
    with commit():
        ping = webhook_ping(webhook=hook)
    webhook_update(webhook=hook, active=False)
    work()
    ping.refresh_from_db()
    assert (ping.state, ping.error) == ("failed", "the webhook was deactivated")
    assert receiver.received == []
    with pytest.raises(ValueError, match="inactive: activate it first"):
        webhook_ping(webhook=hook)


@pytest.mark.django_db
def test_an_attempt_already_made_is_not_made_again(hook, receiver, queued, commit):
    with commit():
        ping = webhook_ping(webhook=hook)
    assert delivery_attempt(ping.pk, 1) is not None
    assert delivery_attempt(ping.pk, 1) is None  # a duplicate message
    assert delivery_attempt(ping.pk, 3) is None  # not its turn
    assert len(receiver.received) == 1


@pytest.mark.django_db
def test_a_receiver_that_does_not_answer_times_out(hook, receiver, queued, settings, commit):
    settings.NSM_WEBHOOK_READ_TIMEOUT = 0.2
    receiver.hold = True
    with commit():
        ping = webhook_ping(webhook=hook)
    delivery_attempt(ping.pk, 1)
    receiver.release.set()
    ping.refresh_from_db()
    assert (ping.state, ping.status_code, ping.error) == ("pending", None, "no answer within 0.2 s")


def broker_messages() -> list[tuple[str, list]]:
    """(task name, args) of each message in the test's broker folder (kombu's filesystem transport)."""
    found = []
    for path in (settings.NSM_BROKER_DIR / "queue").glob("*.msg"):
        message = json.loads(path.read_text())
        body = json.loads(base64.b64decode(message["body"]))
        found.append((message["headers"]["task"], body[0]))
    return found


@pytest.mark.django_db(transaction=True)
def test_a_dead_endpoint_does_not_make_the_request_wait(
    admin_user, adjudicator, submitted, closed_port, receiver
):
    """Real commits (a transactional test): the request runs its on-commit work as in production.
    The hook's receiver holds every request until released: had the request delivered inline, it
    would still be waiting. It returns at once, with the delivery published for the worker."""
    from webhooks.services import webhook_create

    for message in (settings.NSM_BROKER_DIR / "queue").glob("*.msg"):
        message.unlink()
    dead = webhook_create(user=admin_user, url=closed_port, events=["gold.resolved"])
    receiver.hold = True
    held = webhook_create(user=admin_user, url=receiver.url, events=["gold.resolved"])
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(adjudicator)
    body = {"values": {"agency": "i"}, "why": "the writer acts", "base_version": gold_version(gold)}
    response = api.post(reverse("api_gold_resolve", args=[submitted.pk, gold.item_id]), body, format="json")
    assert response.status_code == 200, response.content
    deliveries = {d.webhook_id: d for d in Delivery.objects.all()}
    assert set(deliveries) == {dead.pk, held.pk}
    # not attempted: had the request delivered inline, it would have waited out the read timeout
    assert all(d.state == "pending" and d.attempts == 0 for d in deliveries.values())
    assert receiver.received == []
    published = sorted(args for task, args in broker_messages() if task == "webhooks.deliver")
    assert published == sorted([[deliveries[dead.pk].pk, 1], [deliveries[held.pk].pk, 1]])

    # the worker's attempt at the dead endpoint fails at once and is scheduled again
    delivery_attempt(deliveries[dead.pk].pk, 1)
    failed = Delivery.objects.get(pk=deliveries[dead.pk].pk)
    assert failed.state == "pending" and failed.attempts == 1 and failed.status_code is None
    assert "ConnectionRefusedError" in failed.error
    receiver.release.set()


def test_a_receiver_rejects_an_old_timestamp_or_a_changed_body():
    secret, body = "whsec_test", '{"event":"ping"}'
    now = str(int(time.time()))
    assert signature_valid(secret, now, body, signature(secret, now, body))
    old = str(int(time.time()) - 3600)
    assert not signature_valid(secret, old, body, signature(secret, old, body))  # a replay
    assert not signature_valid(secret, now, body + " ", signature(secret, now, body))
    assert not signature_valid(secret, "soon", body, signature(secret, "soon", body))


@pytest.mark.django_db
def test_the_guides_receiver_accepts_a_real_delivery_and_refuses_a_replay(
    hook, receiver, queued, work, commit
):
    """The receiver in docs/webhooks.md, run on what the worker sent."""
    from pathlib import Path

    guide = (Path(settings.BASE_DIR) / "docs" / "webhooks.md").read_text()
    code = guide.split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace('SECRET = b"whsec_..."', f"SECRET = {hook.secret.encode()!r}")
    namespace: dict = {}
    exec(code.replace("HTTPServer((", "# HTTPServer(("), namespace)  # all but serving
    with commit():
        webhook_ping(webhook=hook)
    work()
    (got,) = receiver.received
    stamp, signed = got.headers["X-NSM-Timestamp"], got.headers["X-NSM-Signature"]
    assert namespace["verified"](stamp, got.body.encode(), signed)
    assert not namespace["verified"](stamp, got.body.encode() + b" ", signed)
    old = str(int(stamp) - 3600)
    assert not namespace["verified"](
        old, got.body.encode(), signature(hook.secret, old, got.body)
    )  # a replay
