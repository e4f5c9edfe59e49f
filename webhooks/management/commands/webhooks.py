"""Webhooks from the command line: ``manage.py webhooks list | add URL --event E [--event E ...]
| deliveries HOOK [--limit N] | redeliver DELIVERY | ping HOOK | activate HOOK | deactivate HOOK
| delete HOOK | send-due``. HOOK and DELIVERY are ids. ``add`` prints the new hook's secret, this
once. ``ping`` and ``redeliver`` queue a delivery for the worker, as the page does; ``send-due``
makes the due attempts here and now (for a deployment without a worker sweep). Bad input: exit 2
with the line that says why, nothing written."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from webhooks.models import ALL, EVENTS, Delivery, Webhook
from webhooks.selectors import webhook_deliveries, webhooks_listed
from webhooks.services import (
    WebhookError,
    deliveries_send_due,
    delivery_redeliver,
    webhook_create,
    webhook_delete,
    webhook_ping,
    webhook_update,
)


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "List, register, ping and (de)activate webhooks; list their deliveries and send one again."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every webhook")
        add = sub.add_parser("add", help="register a webhook; prints its secret, this once")
        add.add_argument("url", metavar="URL", help="http or https")
        add.add_argument(
            "--event", dest="events", action="append", required=True, metavar="EVENT",
            help=f"an event to send, repeatable: {', '.join(EVENTS)}, or {ALL} for every event",
        )  # fmt: skip
        add.add_argument("--inactive", action="store_true", help="registered but not sent to yet")
        deliveries = sub.add_parser("deliveries", help="a webhook's deliveries, newest first")
        deliveries.add_argument("hook", type=int, metavar="HOOK")
        deliveries.add_argument("--limit", type=int, default=20, help="how many (default 20)")
        again = sub.add_parser("redeliver", help="send a delivery again, as a new delivery")
        again.add_argument("delivery", type=int, metavar="DELIVERY")
        for name, text in (
            ("ping", "queue a test ping to a webhook"),
            ("activate", "send a webhook its events again"),
            ("deactivate", "stop sending a webhook events"),
            ("delete", "delete a webhook and its deliveries"),
        ):
            sub.add_parser(name, help=text).add_argument("hook", type=int, metavar="HOOK")
        sub.add_parser("send-due", help="make every due attempt now, here (the worker's sweep does it too)")

    def handle(self, *args: Any, action: str, **o: Any) -> None:
        try:
            getattr(self, "_" + action.replace("-", "_"))(**o)
        except WebhookError as error:
            raise _bad(str(error)) from None

    def _hook(self, pk: int) -> Webhook:
        try:
            return Webhook.objects.get(pk=pk)
        except Webhook.DoesNotExist:
            raise _bad(f"no webhook has the id {pk}") from None

    def _list(self, **o: Any) -> None:
        hooks = list(webhooks_listed())
        if not hooks:
            self.stdout.write("no webhooks yet: manage.py webhooks add URL --event EVENT registers one")
        for h in hooks:
            state = "active" if h.active else "inactive"
            self.stdout.write(
                f"#{h.pk:<5} {state:<9} {','.join(h.events):<40} {h.n_deliveries:>6} deliveries "
                f"({h.n_pending} pending, {h.n_failed} failed)  {h.url}"
            )

    def _add(self, url: str, events: list[str], inactive: bool, **o: Any) -> None:
        hook = webhook_create(user=None, url=url, events=events, active=not inactive)
        self.stdout.write(f"webhook #{hook.pk} registered for {', '.join(hook.events)} -> {hook.url}")
        self.stdout.write(f"secret (shown only now): {hook.secret}")

    def _deliveries(self, hook: int, limit: int, **o: Any) -> None:
        if limit < 1:
            raise _bad(f"--limit: at least 1, not {limit}")
        rows = list(webhook_deliveries(self._hook(hook))[:limit])
        if not rows:
            self.stdout.write("no deliveries yet")
        for d in rows:
            code = d.status_code if d.status_code is not None else "-"
            took = f"{d.duration_ms} ms" if d.duration_ms is not None else "-"
            line = f"#{d.pk:<6} {d.created_at:%Y-%m-%d %H:%M:%S} {d.event:<20} {d.state:<9} "
            line += f"attempts {d.attempts}  status {code}  {took}"
            if d.state == Delivery.State.PENDING and d.attempts:
                line += f"  next {d.next_attempt_at:%H:%M:%S}"
            if d.error:
                line += f"  ({d.error})"
            self.stdout.write(line)

    def _redeliver(self, delivery: int, **o: Any) -> None:
        try:
            original = Delivery.objects.select_related("webhook").get(pk=delivery)
        except Delivery.DoesNotExist:
            raise _bad(f"no delivery has the id {delivery}") from None
        again = delivery_redeliver(delivery=original)
        self.stdout.write(f"delivery #{original.pk} queued again as #{again.pk}")

    def _ping(self, hook: int, **o: Any) -> None:
        sent = webhook_ping(webhook=self._hook(hook))
        self.stdout.write(f"ping queued as delivery #{sent.pk} to {sent.webhook.url}")

    def _activate(self, hook: int, **o: Any) -> None:
        webhook_update(webhook=self._hook(hook), active=True)
        self.stdout.write(f"webhook #{hook} active")

    def _deactivate(self, hook: int, **o: Any) -> None:
        webhook_update(webhook=self._hook(hook), active=False)
        self.stdout.write(f"webhook #{hook} inactive")

    def _delete(self, hook: int, **o: Any) -> None:
        webhook_delete(webhook=self._hook(hook))
        self.stdout.write(f"webhook #{hook} deleted")

    def _send_due(self, **o: Any) -> None:
        sent = deliveries_send_due()
        for d in sent:
            self.stdout.write(f"#{d.pk} {d.event} attempt {d.attempts}: {d.state} {d.error}".rstrip())
        self.stdout.write(f"{len(sent)} due attempts made")
