"""Webhooks' pages: the list and its form (a bad URL a 400 naming it), the secret shown once, the
deliveries log and its actions with htmx and without, and nothing for non-admins; the Django
admin never lists the secret."""

from __future__ import annotations

import pytest
from django.urls import reverse

from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db


def test_an_admin_registers_a_hook_and_sees_the_secret_once(client, admin_user, receiver):
    client.force_login(admin_user)
    page = client.get(reverse("webhooks"))
    assert page.status_code == 200 and "No webhooks yet" in page.content.decode()
    made = client.post(reverse("webhooks"), {"url": receiver.url, "events": ["gold.resolved"]})
    hook = Webhook.objects.get()
    assert made.status_code == 302 and made.url == reverse("webhook", args=[hook.pk])
    first = client.get(made.url).content.decode()
    assert f'<code id="webhook-secret-value">{hook.secret}</code>' in first
    again = client.get(made.url).content.decode()
    assert hook.secret not in again and "webhook-secret" not in again
    listed = client.get(reverse("webhooks")).content.decode()
    assert f'data-hook="{hook.pk}"' in listed and receiver.url in listed and hook.secret not in listed
    assert hook.events == ["gold.resolved"] and hook.created_by == admin_user


@pytest.mark.parametrize(
    ("url", "says"),
    [("file:///etc/passwd", "not file"), ("http://", "has no host"), ("", "This field is required")],
)
def test_a_bad_url_is_a_400_naming_it(client, admin_user, url, says):
    client.force_login(admin_user)
    answer = client.post(reverse("webhooks"), {"url": url, "events": ["*"]})
    assert answer.status_code == 400
    page = answer.content.decode()
    error = page[page.index('data-field="url"') :]
    assert says in error[: error.index("</div>")]
    assert not Webhook.objects.exists()


def test_no_event_chosen_is_a_400_naming_the_events(client, admin_user, receiver):
    client.force_login(admin_user)
    answer = client.post(reverse("webhooks"), {"url": receiver.url})
    assert answer.status_code == 400 and 'data-field="events"' in answer.content.decode()
    assert not Webhook.objects.exists()


def test_ping_and_send_again_with_and_without_htmx(client, admin_user, hook, queued, work, commit):
    client.force_login(admin_user)
    with commit():
        plain = client.post(reverse("webhook_ping", args=[hook.pk]))
    ping = Delivery.objects.get()
    assert plain.status_code == 302 and queued == [(ping.pk, 1)]
    page = client.get(reverse("webhook", args=[hook.pk])).content.decode()
    assert f"Ping queued as delivery #{ping.pk}." in page
    assert f'data-delivery="{ping.pk}" data-state="pending"' in page
    assert 'hx-trigger="every 3s"' in page  # watched while pending
    work()
    log = client.get(reverse("webhook_deliveries_log", args=[hook.pk])).content.decode()
    assert f'data-delivery="{ping.pk}" data-state="delivered"' in log and "every 3s" not in log
    assert "&quot;event&quot;:&quot;ping&quot;" in log  # the body sent
    with commit():
        swapped = client.post(reverse("delivery_redeliver", args=[hook.pk, ping.pk]), HTTP_HX_REQUEST="true")
    again = Delivery.objects.exclude(pk=ping.pk).get()
    fragment = swapped.content.decode()
    assert swapped.status_code == 200 and fragment.lstrip().startswith('<section id="deliveries"')
    assert f"Delivery #{ping.pk} queued again as #{again.pk}." in fragment
    assert f'data-delivery="{again.pk}" data-state="pending"' in fragment
    assert again.redelivery_of_id == ping.pk


def test_deactivate_activate_and_delete(client, admin_user, hook):
    client.force_login(admin_user)
    assert client.post(reverse("webhook_active", args=[hook.pk]), {"active": "0"}).status_code == 302
    hook.refresh_from_db()
    assert not hook.active
    refused = client.post(reverse("webhook_ping", args=[hook.pk]))
    assert refused.status_code == 409 and "inactive: activate it first" in refused.content.decode()
    assert not Delivery.objects.exists()
    bad = client.post(reverse("webhook_active", args=[hook.pk]), {"active": "maybe"})
    assert bad.status_code == 400 and "active: send 1 to activate or 0" in bad.content.decode()
    client.post(reverse("webhook_active", args=[hook.pk]), {"active": "1"})
    hook.refresh_from_db()
    assert hook.active
    gone = client.post(reverse("webhook_delete", args=[hook.pk]))
    assert gone.status_code == 302 and gone.url == reverse("webhooks") and not Webhook.objects.exists()


@pytest.mark.parametrize("who", ["annotator", "adjudicator", "outsider"])
def test_non_admins_get_nothing(client, request, who, hook, receiver):
    client.force_login(request.getfixturevalue(who))
    for url in (reverse("webhooks"), reverse("webhook", args=[hook.pk])):
        answer = client.get(url)
        assert answer.status_code == 403 and hook.secret not in answer.content.decode()
    assert client.post(reverse("webhooks"), {"url": receiver.url, "events": ["*"]}).status_code == 403
    assert client.post(reverse("webhook_ping", args=[hook.pk])).status_code == 403
    assert client.post(reverse("webhook_delete", args=[hook.pk])).status_code == 403
    assert Webhook.objects.count() == 1 and not Delivery.objects.exists()


def test_the_nav_links_the_page_for_admins_only(client, admin_user, adjudicator):
    client.force_login(admin_user)
    assert f'href="{reverse("webhooks")}"' in client.get(reverse("home")).content.decode()
    client.force_login(adjudicator)
    assert f'href="{reverse("webhooks")}"' not in client.get(reverse("home")).content.decode()


def test_the_django_admin_never_shows_the_secret(client, admin_user, hook):
    admin_user.is_superuser = True
    admin_user.save()
    client.force_login(admin_user)
    for url in (
        reverse("admin:webhooks_webhook_changelist"),
        reverse("admin:webhooks_webhook_change", args=[hook.pk]),
    ):
        answer = client.get(url)
        assert answer.status_code == 200 and hook.url in answer.content.decode()
        assert hook.secret not in answer.content.decode()
