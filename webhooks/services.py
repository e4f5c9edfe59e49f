"""Webhooks' writes: registering hooks, turning each domain event into deliveries, and the
worker's attempts with their retries (docs/webhooks.md).

A delivery never runs in the thread of the request that caused its event: the event arrives
after the request's transaction commits (annotator.events), its deliveries are written and
*published* to the broker for the worker's ``webhooks.deliver`` task, which makes the HTTP call.
Even under CELERY_TASK_ALWAYS_EAGER (the tests) a delivery is published, not run inline.

Attempts claim their delivery with a conditional update on its attempt count, so a task that
arrives twice, or a sweep that hands out an attempt already under way, sends it once. A failed
attempt schedules the next (conf.retry_waits); the worker's sweep (webhooks.tasks) hands out the
due ones."""

from __future__ import annotations

import json
import logging
import warnings
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from celery import current_app
from celery.exceptions import AlwaysEagerIgnored
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from webhooks import conf
from webhooks.models import ALL, EVENTS, PING, RESPONSE_EXCERPT, URL_MAX, URL_RE, Delivery, Webhook
from webhooks.selectors import event_listened
from webhooks.signing import headers, host_refused, post, secret_new

log = logging.getLogger(__name__)

TASK = "webhooks.deliver"


class WebhookError(ValueError):
    """A hook or a step refused; ``field`` names the input at fault (the API's 400 says it)."""

    def __init__(self, message: str, *, field: str = "", status: int = 400) -> None:
        super().__init__(message)
        self.field = field
        self.api_status = status

    def api_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": str(self)}
        if self.field:
            body[self.field] = [str(self)]
        return body


# Checks ----------------------------------------------------------------------------------------


def url_problem(url: str) -> str:
    """Why ``url`` cannot be a hook's, or "". URL_PATTERN decides (the API's schema states it);
    the checks before it only say why in more words."""
    shown = repr(url[:100])
    if not url:
        return _("url: give the URL to send events to")
    if len(url) > URL_MAX:
        return _("url: at most %(n)s characters") % {"n": URL_MAX}
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        return _("url: %(url)s is not a URL: it starts with http:// or https://") % {"url": shown}
    if scheme.lower() not in ("http", "https"):
        return _("url: only http and https URLs are accepted, not %(scheme)s") % {"scheme": scheme[:20]}
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in host:
        return _("url: no user or password in the URL (the signature authenticates each delivery)")
    if not host.split(":", 1)[0]:
        return _("url: %(url)s has no host") % {"url": shown}
    if not URL_RE.fullmatch(url):
        return _(
            "url: %(url)s is not an http or https URL of a host name (or IPv4 address) and an optional "
            "port up to 65535, in printable ASCII (percent-encode spaces and other characters)"
        ) % {"url": shown}
    host = urlsplit(url).hostname or ""
    if not conf.allow_private() and host_refused(host):
        return _(
            "url: %(host)s is a private or local address, which a hook may not reach (a deployment "
            "that sends hooks to its own network sets NSM_WEBHOOK_ALLOW_PRIVATE)"
        ) % {"host": repr(host[:100])}
    return ""


def events_checked(events: list[str]) -> list[str]:
    """The hook's events, each known, in order and once; "*" alone stands for every event."""
    if not events:
        raise WebhookError(_("events: choose at least one event, or * for all"), field="events")
    unknown = [e for e in events if e != ALL and e not in EVENTS]
    if unknown:
        raise WebhookError(
            _("events: unknown %(events)s; known: %(known)s")
            % {"events": ", ".join(map(repr, unknown)), "known": ", ".join([ALL, *EVENTS])},
            field="events",
        )
    if ALL in events:
        return [ALL]
    return list(dict.fromkeys(events))


def _url_checked(url: str) -> str:
    if problem := url_problem(url):
        raise WebhookError(problem, field="url")
    return url


# Hooks -----------------------------------------------------------------------------------------


def webhook_create(*, user, url: str, events: list[str], active: bool = True) -> Webhook:
    """A new hook with a new secret (the caller shows ``webhook.secret`` once)."""
    return Webhook.objects.create(
        url=_url_checked(url),
        events=events_checked(events),
        active=active,
        secret=secret_new(),
        created_by=user,
    )


def webhook_update(
    *, webhook: Webhook, url: str | None = None, events: list[str] | None = None, active: bool | None = None
) -> Webhook:
    """Change what is given; an inactive hook gets no new deliveries and its pending ones fail
    at their next attempt."""
    changes: dict[str, Any] = {}
    if url is not None:
        changes["url"] = _url_checked(url)
    if events is not None:
        changes["events"] = events_checked(events)
    if active is not None:
        changes["active"] = active
    for name, value in changes.items():
        setattr(webhook, name, value)
    if changes:
        webhook.save(update_fields=list(changes))
    return webhook


def webhook_delete(*, webhook: Webhook) -> None:
    webhook.delete()  # its deliveries with it


# Deliveries ------------------------------------------------------------------------------------


def _body(event: str, payload: dict[str, Any], at: datetime) -> str:
    return json.dumps(
        {"event": event, "at": at.isoformat(), "payload": payload},
        cls=DjangoJSONEncoder,
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _deliveries_create(
    hooks: list[Webhook], event: str, payload: dict[str, Any], at: datetime
) -> list[Delivery]:
    """One pending delivery per hook, its first attempt handed to the worker once committed."""
    body = _body(event, payload, at)
    stored = json.loads(body)["payload"]  # what the body says, as JSON has it
    due = timezone.now() + conf.lease()  # held for the attempt just handed out
    with transaction.atomic():
        made = Delivery.objects.bulk_create(
            [Delivery(webhook=h, event=event, payload=stored, body=body, next_attempt_at=due) for h in hooks]
        )
    ids = [d.pk for d in made]
    transaction.on_commit(lambda: [delivery_enqueue(pk, 1) for pk in ids])
    return made


def deliveries_record(*, name: str, payload: dict[str, Any], at: datetime) -> list[Delivery]:
    """The receiver of annotator.events.domain_event: a delivery to each active hook that wants
    the event. Without such a hook it reads nothing (the cached events listened for) and writes
    nothing."""
    if not event_listened(name):
        return []
    hooks = [h for h in Webhook.objects.filter(active=True).only("pk", "events") if h.wants(name)]
    if not hooks:
        return []
    return _deliveries_create(hooks, name, payload, at)


def webhook_ping(*, webhook: Webhook) -> Delivery:
    """A ``ping`` delivery to the hook, to see that it answers and checks the signature."""
    _active(webhook)
    now = timezone.now()
    payload = {"webhook": webhook.pk, "events": webhook.events, "zen": "a ping from nsm-audit"}
    return _deliveries_create([webhook], PING, payload, now)[0]


def delivery_redeliver(*, delivery: Delivery) -> Delivery:
    """Send a delivery again as a new one (its own id and attempts, the same event and body),
    whatever became of the first; the log keeps both."""
    _active(delivery.webhook)
    due = timezone.now() + conf.lease()
    with transaction.atomic():
        again = Delivery.objects.create(
            webhook=delivery.webhook, event=delivery.event, payload=delivery.payload, body=delivery.body,
            next_attempt_at=due, redelivery_of=delivery,
        )  # fmt: skip
    transaction.on_commit(lambda: delivery_enqueue(again.pk, 1))
    return again


def _active(webhook: Webhook) -> None:
    if not webhook.active:
        raise WebhookError(
            _("webhook #%(id)s is inactive: activate it first") % {"id": webhook.pk}, status=409
        )


def delivery_enqueue(delivery_id: int, attempt: int) -> None:
    """Publish the attempt for the worker; never runs it here. A broker that cannot be reached
    leaves the delivery pending: the sweep hands it out once its lease ends."""
    app = current_app
    try:
        if app.conf.task_always_eager:
            with warnings.catch_warnings():  # send_task publishes even then: what we want
                warnings.simplefilter("ignore", AlwaysEagerIgnored)
                app.send_task(TASK, (delivery_id, attempt), retry=False)
        else:
            app.send_task(TASK, (delivery_id, attempt), retry=False)
    except Exception:  # kombu raises several kinds; the sweep sends it later
        log.warning("webhook delivery %s: could not reach the broker; the sweep will send it", delivery_id)


def delivery_attempt(delivery_id: int, attempt: int, *, now: datetime | None = None) -> Delivery | None:
    """The worker's side: attempt number ``attempt`` of the delivery, if it is still that one's
    turn (None otherwise: sent already, or another run has it). Records the outcome, and after a
    failure schedules the next attempt or, the retries spent, fails the delivery."""
    now = now or timezone.now()
    claimed = Delivery.objects.filter(
        pk=delivery_id, state=Delivery.State.PENDING, attempts=attempt - 1
    ).update(attempts=attempt, attempted_at=now, next_attempt_at=now + conf.lease())
    if not claimed:
        return None
    delivery = Delivery.objects.select_related("webhook").get(pk=delivery_id)
    hook = delivery.webhook
    if not hook.active:
        _record(delivery, attempt, state=Delivery.State.FAILED, error="the webhook was deactivated")
        return delivery
    sent = headers(event=delivery.event, delivery_id=delivery.pk, secret=hook.secret, body=delivery.body)
    limits = {"connect_timeout": conf.connect_timeout(), "read_timeout": conf.read_timeout()}
    allowed = conf.allow_private()
    outcome = post(hook.url, delivery.body, sent, excerpt=RESPONSE_EXCERPT, allow_private=allowed, **limits)
    fields: dict[str, Any] = {
        "status_code": outcome.status, "response": outcome.response, "error": outcome.error,
        "duration_ms": outcome.duration_ms,
    }  # fmt: skip
    waits = conf.retry_waits()
    if outcome.ok:
        _record(delivery, attempt, state=Delivery.State.DELIVERED, delivered_at=timezone.now(), **fields)
    elif attempt <= len(waits):
        _record(
            delivery, attempt, state=Delivery.State.PENDING,
            next_attempt_at=now + timedelta(seconds=waits[attempt - 1]), **fields,
        )  # fmt: skip
    else:
        _record(delivery, attempt, state=Delivery.State.FAILED, **fields)
    return delivery


def _record(delivery: Delivery, attempt: int, *, state: str, next_attempt_at=None, **fields: Any) -> None:
    """The attempt's outcome, unless a later attempt has begun meanwhile (its own will be kept)."""
    fields = {"state": state, "next_attempt_at": next_attempt_at, **fields}
    Delivery.objects.filter(pk=delivery.pk, attempts=attempt).update(**fields)
    for name, value in fields.items():
        setattr(delivery, name, value)


def deliveries_reserve_due(*, now: datetime | None = None, limit: int = 200) -> list[tuple[int, int]]:
    """The due pending deliveries, each held for its next attempt (so that a second sweep does
    not hand it out again): (delivery id, attempt number) for each, oldest due first."""
    now = now or timezone.now()
    due = Delivery.objects.filter(state=Delivery.State.PENDING, next_attempt_at__lte=now)
    reserved = []
    for pk, attempts in due.order_by("next_attempt_at").values_list("pk", "attempts")[:limit]:
        held = Delivery.objects.filter(
            pk=pk, state=Delivery.State.PENDING, attempts=attempts, next_attempt_at__lte=now
        ).update(next_attempt_at=now + conf.lease())
        if held:
            reserved.append((pk, attempts + 1))
    return reserved


def deliveries_hand_out(*, now: datetime | None = None) -> int:
    """The worker's sweep: publish each due attempt for the worker's tasks."""
    reserved = deliveries_reserve_due(now=now)
    for pk, attempt in reserved:
        delivery_enqueue(pk, attempt)
    return len(reserved)


def deliveries_send_due(*, now: datetime | None = None) -> list[Delivery]:
    """Make each due attempt here and now (``manage.py webhooks send-due``, and the tests, which
    drive the retries with ``now``)."""
    sent = []
    for pk, attempt in deliveries_reserve_due(now=now):
        if (delivery := delivery_attempt(pk, attempt, now=now)) is not None:
            sent.append(delivery)
    return sent
