"""An adjudicator proposes a convention from the Conventions page alone: the slot from a list of the
twelve, then both values and the chosen one from lists that follow the slot (htmx)."""

import pytest
from playwright.sync_api import expect

from adjudication.models import Convention
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES

pytestmark = pytest.mark.django_db(transaction=True)


def settled(page):
    """Wait until htmx has finished the request, the swap and the settle."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-added, .htmx-settling, .htmx-swapping')"
    )


def options(page, name):
    return page.locator(f"#propose-form select[name={name}] option").evaluate_all(
        "els => els.map(e => e.value).filter(v => v)"
    )


def test_the_value_lists_follow_the_slot_and_the_proposal_is_saved(
    page, live_server, login, adjudicator, submitted
):
    login("carol", "carol-pw")
    page.goto(f"{live_server.url}/adjudicate/conventions/")
    assert options(page, "slot") == list(SLOT_NAMES)
    page.select_option("#propose-form select[name=round]", label=submitted.name)
    page.select_option("#propose-form select[name=slot]", "time_direction")
    expect(page.locator("#propose-form select[name=value_a] option")).to_have_count(4)  # choose… + 3
    settled(page)
    assert options(page, "value_a") == list(SLOT_BY_NAME["time_direction"].values)
    page.select_option("#propose-form select[name=slot]", "agency")  # changing the slot again
    expect(page.locator("#propose-form select[name=value_a] option[value=someone-else]")).to_have_count(1)
    settled(page)
    for name in ("value_a", "value_b", "chosen"):
        assert options(page, name) == list(SLOT_BY_NAME["agency"].values)
    page.select_option("#propose-form select[name=value_a]", "i")
    page.select_option("#propose-form select[name=value_b]", "someone-else")
    page.select_option("#propose-form select[name=chosen]", "someone-else")
    page.fill("#propose-form textarea[name=rule]", "A named other doer takes agency=someone-else.")
    page.click("#propose-form button[type=submit]")
    expect(page.locator("#convention-status")).to_have_text("proposed")
    convention = Convention.objects.get()
    assert (convention.slot, convention.value_a, convention.value_b, convention.chosen) == (
        "agency",
        "i",
        "someone-else",
        "someone-else",
    )
