"""Webhooks' reads: the hooks with their delivery counts, and a hook's deliveries, newest first."""

from __future__ import annotations

from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Q, QuerySet

from webhooks.models import ALL, Delivery, Webhook

#: the deliveries a hook's page lists (the API pages through them all)
LOG_SIZE = 100
#: the events some active hook listens for, kept in the cache: a submit asks it every time
#: (annotator.events.event_wanted). Forgotten whenever a hook is saved or deleted (WebhooksConfig);
#: the timeout bounds what a write around the models (a queryset update) could leave stale
EVENTS_KEY = "webhooks:events-listened"
EVENTS_SECONDS = 300


def events_listened() -> frozenset[str]:
    """The events an active hook wants ("*" stands for all)."""
    listened = cache.get(EVENTS_KEY)
    if listened is None:
        listened = frozenset(
            event for events in Webhook.objects.filter(active=True).values_list("events", flat=True)
            for event in events
        )  # fmt: skip
        cache.set(EVENTS_KEY, listened, timeout=EVENTS_SECONDS)
    return listened


def event_listened(name: str) -> bool:
    listened = events_listened()
    return ALL in listened or name in listened


def events_forget(**kwargs) -> None:
    """Now, and again once the write commits: a request of another process may have read the
    hooks between the two and cached what the write is changing."""
    cache.delete(EVENTS_KEY)
    transaction.on_commit(lambda: cache.delete(EVENTS_KEY))


def webhooks_listed() -> QuerySet[Webhook]:
    return Webhook.objects.select_related("created_by").annotate(
        n_deliveries=Count("deliveries"),
        n_failed=Count("deliveries", filter=Q(deliveries__state=Delivery.State.FAILED)),
        n_pending=Count("deliveries", filter=Q(deliveries__state=Delivery.State.PENDING)),
    )


def webhook_deliveries(webhook: Webhook) -> QuerySet[Delivery]:
    return Delivery.objects.filter(webhook=webhook).order_by("-created_at", "-id")
