"""manage.py webhooks: list, add (the secret printed once), deliveries, redeliver, ping,
(de)activate, delete and send-due; bad input exits 2 with the line that says why, writing nothing."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("webhooks", *args, stdout=out)
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as raised:
        run(*args)
    assert raised.value.returncode == 2
    return str(raised.value)


def test_add_list_ping_deliveries_redeliver(receiver, queued, work, commit):
    assert run("list").startswith("no webhooks yet")
    added = run("add", receiver.url, "--event", "gold.resolved", "--event", "round.completed")
    hook = Webhook.objects.get()
    assert f"webhook #{hook.pk} registered for gold.resolved, round.completed -> {receiver.url}" in added
    assert f"secret (shown only now): {hook.secret}" in added
    assert hook.secret not in run("list") and receiver.url in run("list")
    with commit():
        pinged = run("ping", str(hook.pk))
    ping = Delivery.objects.get()
    assert pinged == f"ping queued as delivery #{ping.pk} to {receiver.url}\n" and queued == [(ping.pk, 1)]
    work()
    shown = run("deliveries", str(hook.pk))
    assert f"#{ping.pk}" in shown and "delivered" in shown and "status 200" in shown
    with commit():
        assert run("redeliver", str(ping.pk)).startswith(f"delivery #{ping.pk} queued again as #")
    assert Delivery.objects.count() == 2


def test_send_due_makes_the_due_retries(receiver, queued, work, commit):
    run("add", receiver.url, "--event", "*")
    hook = Webhook.objects.get()
    receiver.answers = [500, 200]
    with commit():
        run("ping", str(hook.pk))
    work()
    Delivery.objects.update(next_attempt_at="2000-01-01T00:00:00Z")  # due now
    out = run("send-due")
    assert "attempt 2: delivered" in out and out.endswith("1 due attempts made\n")


def test_deactivate_activate_delete(receiver):
    run("add", receiver.url, "--event", "*", "--inactive")
    hook = Webhook.objects.get()
    assert not hook.active
    assert "inactive: activate it first" in refused("ping", str(hook.pk))
    run("activate", str(hook.pk))
    assert Webhook.objects.get().active
    run("deactivate", str(hook.pk))
    assert not Webhook.objects.get().active
    assert run("delete", str(hook.pk)) == f"webhook #{hook.pk} deleted\n" and not Webhook.objects.exists()


def test_bad_input_exits_2_and_writes_nothing(receiver):
    assert "only http and https URLs are accepted, not file" in refused(
        "add", "file:///etc/passwd", "--event", "*"
    )
    assert "has no host" in refused("add", "http://", "--event", "*")
    assert "unknown 'gold.eaten'" in refused("add", receiver.url, "--event", "gold.eaten")
    assert "no webhook has the id 99" in refused("ping", "99")
    assert "no delivery has the id 99" in refused("redeliver", "99")
    assert not Webhook.objects.exists()
