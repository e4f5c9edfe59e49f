"""Webhooks' reads: the hooks with their delivery counts, and a hook's deliveries, newest first."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from webhooks.models import Delivery, Webhook

#: the deliveries a hook's page lists (the API pages through them all)
LOG_SIZE = 100


def webhooks_listed() -> QuerySet[Webhook]:
    return Webhook.objects.select_related("created_by").annotate(
        n_deliveries=Count("deliveries"),
        n_failed=Count("deliveries", filter=Q(deliveries__state=Delivery.State.FAILED)),
        n_pending=Count("deliveries", filter=Q(deliveries__state=Delivery.State.PENDING)),
    )


def webhook_deliveries(webhook: Webhook) -> QuerySet[Delivery]:
    return Delivery.objects.filter(webhook=webhook).order_by("-created_at", "-id")
