"""Webhooks: a URL an admin registered for some of the tool's events, and each delivery of an
event to it, with every attempt's outcome (docs/webhooks.md)."""

from __future__ import annotations

import re

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy

#: every event a hook may ask for ("*": all of them); ``ping`` is sent only by "Send a test ping"
EVENTS: dict[str, str] = {
    "item_set.imported": gettext_lazy("items imported from a file"),
    "round.completed": gettext_lazy("a round completed: every assignment done"),
    "gold.resolved": gettext_lazy("a gold record resolved by hand"),
    "convention.decided": gettext_lazy("a convention accepted or rejected"),
    "rule_set.activated": gettext_lazy("a rule set version activated"),
    "job.finished": gettext_lazy("a background job done or failed"),
    "export.ready": gettext_lazy("an export's file ready"),
}
ALL = "*"
PING = "ping"
URL_MAX = 2000
#: what a hook's URL may be, for the service and the API's schema alike (so an ECMAScript regex):
#: http or https, a host name or IPv4 address (no user, no IPv6 literal), a port up to 65535, and
#: printable ASCII only (a path's other characters percent-encoded, a host in punycode)
URL_PATTERN = (
    r"^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9._~!$&'()*+,;=%-]+"
    r"(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
    r"([/?#][!-~]*)?$"
)
URL_RE = re.compile(URL_PATTERN)
#: the first bytes of a receiver's answer kept in the log
RESPONSE_EXCERPT = 2048


class Webhook(models.Model):
    url = models.CharField(max_length=URL_MAX, help_text="http or https; where each event is POSTed")
    events = models.JSONField(default=list, help_text='event names, or ["*"] for every event')
    # Kept in clear: signing needs the secret itself (a hash, as for API tokens, could not sign).
    # It is shown once, when the hook is made, and never listed again: not in the admin, the API
    # or the pages (docs/webhooks.md, "The secret").
    secret = models.CharField(max_length=100)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.url

    def wants(self, event: str) -> bool:
        return ALL in self.events or event in self.events


class Delivery(models.Model):
    """One event sent to one hook: the body is fixed when the event happens; every attempt signs it
    again with a fresh timestamp. ``attempts`` counts the attempts begun (an attempt claims the
    delivery by raising it); the columns after it hold the last attempt's outcome."""

    class State(models.TextChoices):
        PENDING = "pending", gettext_lazy("pending")
        DELIVERED = "delivered", gettext_lazy("delivered")
        FAILED = "failed", gettext_lazy("failed")

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=64)
    payload = models.JSONField()
    body = models.TextField(help_text="the JSON body sent, the same on every attempt")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    status_code = models.PositiveIntegerField(null=True, blank=True, help_text="of the last attempt")
    response = models.TextField(blank=True, help_text="the first 2 KB of the last answer")
    error = models.TextField(blank=True, help_text="why the last attempt failed")
    duration_ms = models.PositiveIntegerField(null=True, blank=True, help_text="of the last attempt")
    created_at = models.DateTimeField(auto_now_add=True)
    attempted_at = models.DateTimeField(null=True, blank=True, help_text="when the last attempt began")
    next_attempt_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="pending: when the next attempt is due (or the current one's lease ends)",
    )
    delivered_at = models.DateTimeField(null=True, blank=True)
    redelivery_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="redeliveries"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(state="pending", next_attempt_at__isnull=False)
                | Q(~Q(state="pending"), next_attempt_at__isnull=True),
                name="delivery_pending_has_next_attempt",
            ),
            models.CheckConstraint(
                condition=~Q(state="delivered") | Q(delivered_at__isnull=False),
                name="delivery_delivered_has_time",
            ),
        ]
        indexes = [
            # the worker's sweep: the pending deliveries that are due
            models.Index(fields=["next_attempt_at"], name="delivery_due_idx", condition=Q(state="pending")),
            # a hook's page and API: its deliveries, newest first
            models.Index(fields=["webhook", "-created_at"], name="delivery_hook_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.event} #{self.pk}"
