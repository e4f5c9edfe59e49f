"""An admin registers a webhook for gold.resolved and sees its secret once; an adjudicator resolves
a gold record by hand; a real Celery worker process delivers the event to a receiver the test
runs, signed with that secret; and the admin sees the delivery in the hook's log."""

import json

import pytest
from playwright.sync_api import expect

from adjudication.gold.services import gold_sync
from tests.webhooks.conftest import receiver  # noqa: F401  (the local receiver the test starts)
from webhooks.models import Webhook
from webhooks.signing import signature_valid

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_env() -> dict[str, str]:
    """The worker runs the default settings, which refuse a hook to this machine: the receiver is here."""
    return {"NSM_WEBHOOK_ALLOW_PRIVATE": "1"}


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"{username}-pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_an_admin_sees_a_resolved_gold_record_delivered(
    browser,
    page,
    live_server,
    worker,
    receiver,  # noqa: F811
    submitted,
    admin_user,
    adjudicator,
):
    gold_sync(submitted)
    log_in(page, live_server, "dana")
    page.click("nav >> text=Webhooks")
    page.wait_for_load_state()
    page.fill("#new-webhook input[name=url]", receiver.url)
    page.check("#new-webhook input[name=events][value='gold.resolved']")
    page.click("#new-webhook button[type=submit]")
    secret = page.locator("#webhook-secret-value").inner_text()
    hook = Webhook.objects.get()
    assert secret == hook.secret and hook.events == ["gold.resolved"]
    expect(page.locator("#deliveries-log")).to_contain_text("No deliveries yet")
    page.reload()
    expect(page.locator("#webhook-secret")).to_have_count(0)  # shown once

    # carol resolves t1-0 in her own browser
    context = browser.new_context()
    other = context.new_page()
    other.set_default_timeout(10_000)
    log_in(other, live_server, "carol")
    other.goto(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/gold/")
    other.click("#gold-table tr[data-item='t1-0'] >> text=resolve")
    other.wait_for_load_state()
    other.select_option("#gold-slots select[name=agency]", "i")
    other.fill("input[name=why]", "the writer acts")
    other.click("#resolve")
    expect(other.locator("#gold-progress")).to_contain_text("2 / 4")
    context.close()

    # the worker delivered it; the log, refreshed while it was pending, says so
    page.reload()
    row = page.locator("#deliveries-log tr[data-event='gold.resolved']")
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-state", "delivered", timeout=30_000)
    expect(row.locator(".status-code")).to_have_text("200")
    row.locator("summary").first.click()
    expect(row.locator("pre.body")).to_contain_text('"event":"gold.resolved"')

    (arrived,) = receiver.received
    assert arrived.headers["X-NSM-Event"] == "gold.resolved"
    assert signature_valid(
        secret, arrived.headers["X-NSM-Timestamp"], arrived.body, arrived.headers["X-NSM-Signature"]
    )
    payload = json.loads(arrived.body)["payload"]
    assert payload["by"] == "carol" and payload["slots"]["agency"] == "i"
