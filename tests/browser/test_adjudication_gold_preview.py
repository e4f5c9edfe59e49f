"""An adjudicator resolving an item sees each construal's lines and routed label change as she
chooses slots, and is warned when two construals route to the same label."""

import pytest
from playwright.sync_api import expect

from adjudication.gold.services import gold_sync
from adjudication.models import GoldItem

pytestmark = pytest.mark.django_db(transaction=True)


def settled(page):
    """Wait until htmx has finished the request, the swap and the settle."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-added, .htmx-settling, .htmx-swapping')"
    )


def test_the_preview_follows_the_slots_and_warns_on_one_label(
    page, live_server, login, adjudicator, submitted
):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    login("carol", "carol-pw")
    page.goto(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/gold/{gold.item_id}/")
    first = page.locator("#gold-preview [data-construal='1']")
    expect(first.locator(".routing")).to_contain_text("unresolved agency")

    page.select_option("#gold-slots select[name=agency]", "i")
    expect(first.locator(".routing")).to_have_attribute("data-label", "pride")
    settled(page)
    expect(first.locator("li[data-slot=agency]")).to_contain_text("I did something")

    page.select_option("#gold-slots select[name=agency]", "someone-else")
    expect(first.locator(".routing")).to_have_attribute("data-label", "joy")
    settled(page)

    page.select_option("#gold-slots select[name=agency]", "i")
    expect(first.locator(".routing")).to_have_attribute("data-label", "pride")
    settled(page)
    page.check("input[name=two_construals]")
    expect(page.locator("#no-pivotal")).to_be_visible()
    settled(page)
    page.select_option("#gold-slots select[name=second_intensity]", "very")
    expect(page.locator("#same-label")).to_contain_text("Both construals route to pride")
    settled(page)
    page.select_option("#gold-slots select[name=second_agency]", "someone-else")
    expect(page.locator("#gold-preview [data-construal='2'] .routing")).to_have_attribute("data-label", "joy")
    expect(page.locator("#same-label")).to_have_count(0)
    settled(page)

    page.fill("input[name=why]", "both readings hold")
    page.click("#resolve")
    page.wait_for_url(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/gold/")
    expect(page.locator("#gold-table tr[data-item='t1-0'] .label")).to_contain_text("pride | joy")
