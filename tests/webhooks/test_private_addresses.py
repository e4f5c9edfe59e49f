"""Server-side request forgery: a hook's URL is the worker's to call, so by default it may not name
this machine or a private network (loopback, RFC 1918, link-local such as a cloud's metadata
address 169.254.169.254, carrier-grade NAT, unspecified). An address typed in the URL is refused
when the hook is registered; a host name is resolved at each attempt and every address it gives
is checked, and the worker connects to the address it checked (a name that changes its answer
between the check and the call reaches nothing new). NSM_WEBHOOK_ALLOW_PRIVATE lets a deployment
that sends to its own network do so; the test settings allow it, for the suite's local receiver."""

from __future__ import annotations

import http.server
import ssl
import subprocess

import pytest
from django.urls import reverse

from tests.http_servers import serve_thread
from webhooks import signing
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
              "http://localhost:8000/", "http://LocalHost./", "http://a.localhost/", "http://127.1/",
              "http://2130706433/", "http://0x7f.0.0.1/"]  # fmt: skip


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


def test_an_https_hook_is_called_by_its_name_on_the_address_checked(admin_user, tmp_path, monkeypatch):
    """The worker opens the connection to the checked address itself and wraps it in TLS: the
    certificate must still be checked against the URL's name (SNI and hostname), and the Host
    header still carry it. A receiver with a certificate for 'localhost' only, trusted here."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    seen: list[tuple[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.headers["Host"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    server.socket = served.wrap_socket(server.socket, server_side=True)
    thread = serve_thread(server)
    thread.start()
    port = server.server_address[1]
    trusted = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(signing.ssl, "create_default_context", lambda: trusted)
    try:
        sent = {"connect_timeout": 5, "read_timeout": 5, "excerpt": 100, "allow_private": True}
        outcome = signing.post(f"https://localhost:{port}/in?x=1", "{}", {}, **sent)
        assert (outcome.status, outcome.error) == (204, "")
        assert seen == [("/in?x=1", f"localhost:{port}")]
        # the same receiver by its address: the certificate names localhost, not 127.0.0.1
        outcome = signing.post(f"https://127.0.0.1:{port}/in", "{}", {}, **sent)
        assert outcome.status is None and "certificate" in outcome.error.lower() and len(seen) == 1
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_the_page_names_the_setting_on_the_url_field(settings, client, admin_user):
    settings.NSM_WEBHOOK_ALLOW_PRIVATE = False
    client.force_login(admin_user)
    answer = client.post(reverse("webhooks"), {"url": "http://169.254.169.254/", "events": ["*"]})
    assert answer.status_code == 400
    page = answer.content.decode()
    error = page[page.index('data-field="url"') :]
    assert "&#x27;169.254.169.254&#x27; is a private or local address" in error[: error.index("</div>")]
    assert "NSM_WEBHOOK_ALLOW_PRIVATE" in error[: error.index("</div>")]
    assert not Webhook.objects.exists()
