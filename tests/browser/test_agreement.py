"""An adjudicator opens a round's dashboard, filters its conflicts by slot, and opens an item."""

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment
from annotator.services import annotation_submit
from tests.explications import PRED

pytestmark = pytest.mark.django_db(transaction=True)


def settled(page):
    """Wait until htmx has finished swapping and settling (it wires new elements as it settles; a
    person is never fast enough to notice, a test is)."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-added, .htmx-settling, .htmx-swapping')"
    )


@pytest.fixture
def submitted(prefilled_round, annotator, other_annotator):
    for user, changes in (
        (annotator, {}),
        (other_annotator, {0: {"agency": "someone-else"}, 1: {"body": "yes"}}),
    ):
        for k, a in enumerate(
            Assignment.objects.filter(round=prefilled_round, annotator=user).order_by("item_id")
        ):
            annotation_submit(assignment=a, user=user, values={**PRED, **changes.get(k, {})}, base_version=0)
    return prefilled_round


def test_an_adjudicator_filters_conflicts_by_slot_and_opens_an_item(
    page, live_server, login, adjudicator, submitted
):
    login("carol", "carol-pw")
    page.click("nav >> text=Agreement")
    page.click(f"#round-table tr:has-text('{submitted.name}') >> text=dashboard")
    expect(page.locator("#alpha-chart")).to_be_visible()
    expect(page.locator("#agreement-table tr[data-slot=experiencer] .alpha")).to_have_text("undefined")
    expect(page.locator("#agreement-table tr[data-slot=agency]")).to_contain_text(
        "0.750"
    )  # raw agreement 3/4

    page.click(".subnav >> text=Conflicts")
    page.wait_for_load_state()  # htmx binds the filter's handlers once the page has loaded
    expect(page.locator("#conflict-count")).to_have_text("2")
    # Each choice swaps the list (and the filter form) in place: after each, wait for its answer
    # (the address it pushes) and for htmx to settle before the next choice, or that choice can land
    # on a form about to be replaced (the test failed so on a loaded machine).
    page.select_option("#conflict-filter select[name=slot]", "agency")
    expect(page).to_have_url(f"{live_server.url}/adjudicate/rounds/{submitted.pk}/conflicts/?slot=agency&q=")
    settled(page)
    expect(page.locator("#conflict-count")).to_have_text("1")
    page.select_option("#conflict-filter select[name=a]", "i")  # the value filters came with the swap
    expect(page).to_have_url(
        f"{live_server.url}/adjudicate/rounds/{submitted.pk}/conflicts/?slot=agency&a=i&b=&q="
    )
    settled(page)
    expect(page.locator("#conflict-filter select[name=a]")).to_have_value("i")
    page.select_option("#conflict-filter select[name=b]", "someone-else")
    expect(page).to_have_url(
        f"{live_server.url}/adjudicate/rounds/{submitted.pk}/conflicts/?slot=agency&a=i&b=someone-else&q="
    )
    settled(page)
    expect(page.locator("#conflict-count")).to_have_text("1")
    expect(page.locator("#conflicts")).to_contain_text("(i vs someone-else)")
    rows = page.locator("#conflict-table tbody tr")
    expect(rows).to_have_count(1)
    rows.first.locator("a").click()

    expect(page.locator("#side-by-side")).to_be_visible()
    expect(page.locator("#side-by-side tr.differs")).to_have_count(1)
    expect(page.locator("#side-by-side tr.differs")).to_contain_text("someone-else")
