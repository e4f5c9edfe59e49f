"""Webhooks through the API: register (the secret in that answer only), read, change, delete,
ping, the deliveries and send again; each answer checked against the served schema. Bad URLs and
events are 400s naming the field, with nothing written; non-admins get nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from tests.adjudication.api_checks import conforms
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema))


def send(client, method: str, url: str, body=None):
    data = json.dumps(body) if body is not None else ""
    return getattr(client, method)(url, data, content_type="application/json")


def test_an_admin_registers_a_hook_and_sees_its_secret_only_then(client, admin_user, openapi, receiver):
    client.force_login(admin_user)
    made = send(
        client, "post", "/api/webhooks/", {"url": receiver.url, "events": ["gold.resolved", "export.ready"]}
    )
    assert made.status_code == 201, made.json()
    body = conforms(openapi, made)
    hook = Webhook.objects.get()
    assert body["secret"] == hook.secret and hook.secret.startswith("whsec_") and len(hook.secret) > 40
    assert (body["url"], body["events"], body["active"], body["created_by"]) == (
        receiver.url, ["gold.resolved", "export.ready"], True, "dana",
    )  # fmt: skip
    listed = client.get("/api/webhooks/")
    assert [h["id"] for h in conforms(openapi, listed)] == [hook.pk]
    one = client.get(f"/api/webhooks/{hook.pk}/")
    assert conforms(openapi, one)["url"] == receiver.url
    for answer in (listed, one):
        assert hook.secret not in answer.content.decode() and "secret" not in answer.content.decode()


def test_an_admin_changes_and_deletes_a_hook(client, admin_user, openapi, hook):
    client.force_login(admin_user)
    changed = send(
        client, "patch", f"/api/webhooks/{hook.pk}/", {"active": False, "events": ["*", "job.finished"]}
    )
    assert changed.status_code == 200, changed.json()
    assert conforms(openapi, changed)["events"] == ["*"]
    hook.refresh_from_db()
    assert (hook.active, hook.events) == (False, ["*"])
    assert client.delete(f"/api/webhooks/{hook.pk}/").status_code == 204
    assert not Webhook.objects.exists()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file:///etc/passwd", "only http and https URLs are accepted, not file"),
        ("ftp://example.org/x", "only http and https URLs are accepted, not ftp"),
        ("http://", "has no host"),
        ("https:///path-only", "has no host"),
        ("example.org/hook", "'example.org/hook' is not a URL: it starts with http:// or https://"),
        ("not a url", "'not a url' is not a URL: it starts with http:// or https://"),
        ("http://example.org:99999/", "an optional port up to 65535"),
        ("http://user:pw@example.org/", "no user or password"),
        ("http://example.org/a b", "percent-encode spaces"),
        ("http://exämple.org/", "in printable ASCII"),
        ("http://[::1]:8000/", "of a host name (or IPv4 address)"),
    ],
)
def test_a_bad_url_is_a_400_naming_it_and_writes_nothing(client, admin_user, openapi, url, says):
    client.force_login(admin_user)
    answer = send(client, "post", "/api/webhooks/", {"url": url, "events": ["*"]})
    assert answer.status_code == 400
    body = conforms(openapi, answer)
    assert says in body["url"][0] and body["url"][0].startswith("url: ")
    assert not Webhook.objects.exists()


def test_bad_events_and_unknown_fields_are_400s_naming_them(client, admin_user, hook, receiver):
    client.force_login(admin_user)
    unknown = send(client, "post", "/api/webhooks/", {"url": receiver.url, "events": ["gold.eaten"]})
    assert unknown.status_code == 400 and "events" in unknown.json()
    empty = send(client, "post", "/api/webhooks/", {"url": receiver.url, "events": []})
    assert empty.status_code == 400 and "events" in empty.json()
    extra = send(client, "post", "/api/webhooks/", {"url": receiver.url, "events": ["*"], "secret": "mine"})
    assert extra.status_code == 400 and extra.json() == {"secret": ["unknown field"]}
    bad_change = send(client, "patch", f"/api/webhooks/{hook.pk}/", {"url": "file:///x", "active": False})
    assert bad_change.status_code == 400 and "not file" in bad_change.json()["url"][0]
    hook.refresh_from_db()
    assert hook.active and Webhook.objects.count() == 1  # nothing changed


def test_ping_deliveries_and_send_again(client, admin_user, openapi, hook, receiver, queued, work, commit):
    client.force_login(admin_user)
    with commit():
        pinged = client.post(f"/api/webhooks/{hook.pk}/ping/")
    assert pinged.status_code == 202
    ping = conforms(openapi, pinged)
    assert (ping["event"], ping["state"], ping["attempts"]) == ("ping", "pending", 0)
    work()
    listed = client.get(f"/api/webhooks/{hook.pk}/deliveries/")
    page = conforms(openapi, listed)
    assert page["count"] == 1 and page["results"][0]["state"] == "delivered"
    assert page["results"][0]["status_code"] == 200 and page["results"][0]["duration_ms"] is not None
    one = conforms(openapi, client.get(f"/api/webhooks/{hook.pk}/deliveries/{ping['id']}/"))
    assert one["body"] == receiver.received[0].body
    with commit():
        again = client.post(f"/api/webhooks/{hook.pk}/deliveries/{ping['id']}/redeliver/")
    assert again.status_code == 202
    assert conforms(openapi, again)["redelivery_of"] == ping["id"]
    assert queued == [(again.json()["id"], 1)]
    # a delivery of another hook is not found under this one
    assert client.post(f"/api/webhooks/{hook.pk + 1}/deliveries/{ping['id']}/redeliver/").status_code == 404


def test_an_inactive_hook_refuses_ping_and_send_again_with_409(client, admin_user, openapi, hook):
    client.force_login(admin_user)
    hook.active = False
    hook.save()
    answer = client.post(f"/api/webhooks/{hook.pk}/ping/")
    assert answer.status_code == 409 and "inactive" in conforms(openapi, answer)["detail"]
    assert not Delivery.objects.exists()


@pytest.mark.parametrize("who", ["annotator", "adjudicator", "outsider"])
def test_non_admins_get_nothing(client, request, who, hook):
    client.force_login(request.getfixturevalue(who))
    for method, url in [
        ("get", "/api/webhooks/"), ("post", "/api/webhooks/"), ("get", f"/api/webhooks/{hook.pk}/"),
        ("patch", f"/api/webhooks/{hook.pk}/"), ("delete", f"/api/webhooks/{hook.pk}/"),
        ("post", f"/api/webhooks/{hook.pk}/ping/"), ("get", f"/api/webhooks/{hook.pk}/deliveries/"),
    ]:  # fmt: skip
        body = {"url": "http://example.org/", "events": ["*"]} if method != "get" else None
        answer = send(client, method, url, body) if body else client.get(url)
        assert answer.status_code == 403, (method, url)
        assert hook.secret not in answer.content.decode()
    assert Webhook.objects.count() == 1 and Webhook.objects.get().active and not Delivery.objects.exists()


def test_anonymous_callers_are_asked_for_credentials(client, hook):
    assert client.get("/api/webhooks/").status_code == 401


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook?x=1#f",
        "https://Example.ORG",
        "HTTPS://hooks.example.org:443/a/b%20c",
        "http://a:0/",
    ],
)
def test_a_good_url_is_registered_as_given(client, admin_user, openapi, url):
    client.force_login(admin_user)
    answer = send(client, "post", "/api/webhooks/", {"url": url, "events": ["*"]})
    assert answer.status_code == 201, answer.json()
    assert conforms(openapi, answer)["url"] == url == Webhook.objects.get().url


def test_the_schema_states_the_url_pattern_the_service_applies(openapi):
    from webhooks.models import URL_PATTERN

    body = openapi["components"]["schemas"]["WebhookIn"]["properties"]["url"]
    assert body["pattern"] == URL_PATTERN and body["maxLength"] == 2000
