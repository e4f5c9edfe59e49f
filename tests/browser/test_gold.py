"""Two adjudicators turn conflicts into gold: one proposes a convention from a flow, the other
votes, the preview shows the conflicts it matches, applying resolves them, the remaining item is
resolved by hand, and the gold list shows both with their provenance and routed labels."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"{username}-pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_two_adjudicators_settle_conflicts_into_gold(
    browser, page, live_server, submitted, adjudicator, other_adjudicator
):
    # carol proposes from the flow "alice says i where bob says someone-else"
    log_in(page, live_server, "carol")
    page.goto(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/flows/")
    page.click("tr[data-flow='agency:i:someone-else'] a.propose")
    expect(page.locator("#propose-form")).to_contain_text("From a flow")
    # the flow's slot and values arrive chosen; the value lists are the slot's own
    expect(page.locator("#propose-form select[name=slot]")).to_have_value("agency")
    expect(page.locator("#propose-form select[name=value_a]")).to_have_value("i")
    # the answer is the adjudicator's to give: nothing arrives chosen
    expect(page.locator("#propose-form select[name=chosen]")).to_have_value("")
    page.select_option("#propose-form select[name=chosen]", "i")
    page.fill("#propose-form textarea[name=rule]", "The writer's own doing keeps agency=i.")
    page.click("#propose-form button[type=submit]")
    expect(page.locator("#convention-status")).to_have_text("proposed")
    expect(page.locator("#vote-form input[name=approve]:checked")).to_have_count(0)
    page.check("#vote-form input[name=approve][value=yes]")
    page.click("#vote-form button[type=submit]")
    expect(page.locator("#votes")).to_contain_text("carol: approve")

    # dave votes in his own browser
    context = browser.new_context()
    other = context.new_page()
    other.set_default_timeout(10_000)
    log_in(other, live_server, "dave")
    other.goto(f"{live_server.url}/adjudicate/conventions/")
    other.click("tr[data-convention='C1 v1'] a")
    other.check("#vote-form input[name=approve][value=yes]")
    other.fill("#vote-form input[name=comment]", "matches the guidelines")
    other.click("#vote-form button[type=submit]")
    expect(other.locator("#convention-status")).to_have_text("accepted")

    # reading the page opened no gold record: dave opens them with the page's button
    expect(other.locator("#gold-open")).to_contain_text("4 items have all their annotations in")
    other.click("#gold-open-button")
    expect(other.locator(".messages")).to_contain_text("4 gold records opened")
    expect(other.locator("#gold-open")).to_have_count(0)
    # the preview shows the matched conflicts; applying resolves them
    expect(other.locator("#preview tbody tr")).to_have_count(2)
    expect(other.locator("#preview")).to_contain_text("i / someone-else")
    other.click("#apply")
    expect(other.locator(".messages")).to_contain_text("C1 v1 applied: 2 items settled")
    context.close()

    # carol resolves the remaining conflict by hand
    page.goto(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/gold/")
    expect(page.locator("#gold-progress")).to_contain_text("3 / 4")
    page.click("#gold-table tr[data-item='t3-0'] >> text=resolve")
    expect(page.locator("#gold-slots tr[data-slot=intensity]")).to_contain_text("unresolved")
    page.select_option("#gold-slots select[name=intensity]", "plain")
    page.fill("input[name=why]", "no intensity word in the masked text")
    page.click("#resolve")

    expect(page.locator("#gold-progress")).to_contain_text("4 / 4")
    by_convention = page.locator("#gold-table tr[data-item='t1-0']")
    expect(by_convention.locator(".provenance")).to_contain_text("agency convention C1 v1 by dave")
    expect(by_convention.locator(".label")).to_have_text("pride")
    by_hand = page.locator("#gold-table tr[data-item='t3-0']")
    expect(by_hand.locator(".provenance")).to_contain_text("intensity adjudicated by carol")
    expect(by_hand.locator(".label")).to_have_text("pride")
    expect(page.locator("#gold-table tr[data-item='t4-0'] .provenance")).to_have_text("unanimous")


def test_the_gold_queue_is_worked_from_the_keyboard(page, live_server, submitted, adjudicator):
    """The list opens the waiting records by itself; a record's values are taken with a, b, ...
    and Ctrl+Enter saves and opens the next open record."""
    from adjudication.models import GoldItem

    log_in(page, live_server, "carol")
    page.goto(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/gold/")
    expect(page.locator(".messages")).to_contain_text("4 gold records opened")  # no click needed
    expect(page.locator("#gold-table tr[data-item='t3-0'] .open-slots")).to_have_text("intensity")
    page.click("#gold-table tr[data-item='t1-0'] >> text=resolve")
    expect(page.locator("#resolve-form[data-ready=true]")).to_have_count(1)
    # the first slot that differs is current: agency, where alice said i and bob someone-else
    page.locator("#gold-slots tr[data-slot=agency]").focus()
    page.keyboard.press("b")
    expect(page.locator("#gold-slots select[name=agency]")).to_have_value("someone-else")
    expect(page.locator("#gold-preview")).to_contain_text("someone")  # the live preview followed
    page.keyboard.press("a")
    expect(page.locator("#gold-slots select[name=agency]")).to_have_value("i")
    page.fill("input[name=why]", "the writer acts")
    page.keyboard.press("Control+Enter")
    expect(page.locator("h1")).to_contain_text("t2-0")
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    assert gold.status == "resolved" and gold.construals.get(index=1).slots["agency"] == "i"


def test_a_focused_row_is_the_one_the_keys_take_for(page, live_server, submitted, adjudicator):
    """The take keys acted on the first differing row whatever row had the focus: a row reached by
    Tab or a click must be the current one (found by the acceptance walk, issue 25)."""
    log_in(page, live_server, "carol")
    page.goto(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/gold/")
    page.click("#gold-table tr[data-item='t3-0'] >> text=resolve")
    expect(page.locator("#resolve-form[data-ready=true]")).to_have_count(1)
    body = page.locator("#gold-slots tr[data-slot=body]")
    body.click()  # not the first differing row (intensity): clicked
    page.keyboard.press("b")
    expect(page.locator("#gold-slots select[name=body]")).to_have_value(
        page.locator("#gold-slots tr[data-slot=body] button.take[data-key=b]").get_attribute("data-value")
    )
    expect(body).to_have_class(re.compile(r"\bcurrent\b"))
