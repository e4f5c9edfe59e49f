"""Server-side request forgery: a hook's URL is the worker's to call, so by default it may not name
this machine or a private network (loopback, RFC 1918, link-local such as a cloud's metadata
address 169.254.169.254, carrier-grade NAT, unspecified). An address typed in the URL is refused
when the hook is registered; a host name is resolved at each attempt and every address it gives
is checked, and the worker connects to the address it checked (a name that changes its answer
between the check and the call reaches nothing new). NSM_WEBHOOK_ALLOW_PRIVATE lets a deployment
that sends to its own network do so; the test settings allow it, for the suite's local receiver."""

from __future__ import annotations

import pytest

from webhooks.models import Webhook
from webhooks.services import WebhookError, delivery_attempt, webhook_create, webhook_ping, webhook_update
from webhooks.signing import address_refused

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
     "0.0.0.0", "::1", "::ffff:127.0.0.1", "fd00::1", "fe80::1", "224.0.0.1"],
)  # fmt: skip
def test_private_and_local_addresses_are_refused(address):
    assert address_refused(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_are_not(address):
    assert not address_refused(address)


LOCAL_URLS = ["http://127.0.0.1:8000/hook", "http://169.254.169.254/latest/meta-data/", "https://10.0.0.7/",
              "http://localhost:8000/", "http://LocalHost./", "http://a.localhost/"]  # fmt: skip


@pytest.mark.parametrize("url", LOCAL_URLS)
def test_a_hook_naming_a_local_address_is_refused_when_registered(settings, admin_user, client, url):
    settings.NSM_WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(WebhookError, match="NSM_WEBHOOK_ALLOW_PRIVATE"):
        webhook_create(user=admin_user, url=url, events=["*"])
    client.force_login(admin_user)
    answer = client.post("/api/webhooks/", {"url": url, "events": ["*"]}, content_type="application/json")
    assert answer.status_code == 400 and "NSM_WEBHOOK_ALLOW_PRIVATE" in answer.json()["url"][0]
    assert not Webhook.objects.exists()


def test_a_hook_changed_to_a_local_address_is_refused(settings, admin_user):
    settings.NSM_WEBHOOK_ALLOW_PRIVATE = False
    hook = webhook_create(user=admin_user, url="https://hooks.example.org/in", events=["*"])
    with pytest.raises(WebhookError, match="a private or local address"):
        webhook_update(webhook=hook, url="http://192.168.0.10/in")
    hook.refresh_from_db()
    assert hook.url == "https://hooks.example.org/in"


def test_a_name_that_resolves_to_a_local_address_is_refused_at_delivery(settings, admin_user, receiver):
    """The receiver listens on 127.0.0.1; its URL by the name 'localhost.' passes registration
    under the test settings, then the setting is turned off: the attempt reaches nothing."""
    hook = webhook_create(user=admin_user, url=receiver.url.replace("127.0.0.1", "localhost"), events=["*"])
    ping = webhook_ping(webhook=hook)
    settings.NSM_WEBHOOK_ALLOW_PRIVATE = False
    delivery_attempt(ping.pk, 1)
    ping.refresh_from_db()
    assert ping.status_code is None and receiver.received == []
    assert "localhost resolves to 127.0.0.1, a private or local address" in ping.error
    assert "NSM_WEBHOOK_ALLOW_PRIVATE" in ping.error

    settings.NSM_WEBHOOK_ALLOW_PRIVATE = True  # allowed: the same hook is delivered
    redone = webhook_ping(webhook=hook)
    delivery_attempt(redone.pk, 1)
    redone.refresh_from_db()
    assert redone.state == "delivered" and len(receiver.received) == 1
