"""An adjudicator marks gold lines entailed or not: the counter follows each click without a
reload, and the lines of a second construal say so."""

import pytest
from playwright.sync_api import expect

from verification.calibration import gold_lines

pytestmark = pytest.mark.django_db(transaction=True)


def settled(page):
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-added, .htmx-settling, .htmx-swapping')"
    )


def test_the_counter_follows_each_mark_and_second_construal_lines_are_labelled(
    page, live_server, login, adjudicator, gold_round
):
    total = sum(len(v) for v in gold_lines(gold_round).values())
    login("carol", "carol-pw")
    page.goto(f"{live_server.url}/adjudicate/rounds/{gold_round.pk}/judgements/")
    progress = page.locator("#judgement-progress")
    expect(progress).to_contain_text(f"0 / {total}")
    lines = page.locator("li.judgement")
    lines.nth(0).locator("button[value=yes]").click()
    expect(lines.nth(0)).to_have_class("judgement yes")
    expect(progress).to_contain_text(f"1 / {total}")
    settled(page)
    lines.nth(1).locator("button[value=no]").click()
    expect(progress).to_contain_text(f"2 / {total}")
    expect(progress.locator("progress")).to_have_attribute("value", "2")
    settled(page)
    # changing one's mind is not a new line judged
    lines.nth(0).locator("button[value=no]").click()
    expect(lines.nth(0)).to_have_class("judgement no")
    settled(page)
    expect(progress).to_contain_text(f"2 / {total}")
    second = page.locator("section[data-item='t3-0'] .construal")
    expect(second.first).to_be_visible()
    expect(page.locator("section[data-item='t3-0']")).to_contain_text("construal 2")
    expect(page.locator("section[data-item='t1-0'] .construal")).to_have_count(0)
