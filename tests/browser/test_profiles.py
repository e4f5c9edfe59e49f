"""Annotator profiles in the browser: an adjudicator opens an annotator's profile from the menu and
reads the per-slot table and the throughput chart; the annotator opens their own and turns the
pages of their digest (htmx swaps the digest alone)."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_accessibility import check_pages
from tests.browser.test_gold import log_in
from tests.profiles.conftest import RULE, team  # noqa: F401  (the scenario, as a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_adjudicator_reads_a_profile_and_the_annotator_reads_their_digest(
    browser,
    page,
    live_server,
    team,  # noqa: F811  (the fixture imported above)
    monkeypatch,
):
    monkeypatch.setattr("profiles.selectors.DIGEST_PAGE", 1)  # two entries: two pages
    log_in(page, live_server, "carol")
    page.click("nav >> text=Profiles")
    expect(page.locator("#profiles-table tr[data-annotator=bob]")).to_contain_text("48/48")
    page.click("#profiles-table tr[data-annotator=alice] >> text=alice")
    expect(page.locator("h1")).to_contain_text("alice")
    agency = page.locator("#slot-table tr[data-slot=agency]")
    expect(agency.locator(".gold")).to_contain_text("3/4")
    expect(agency.locator(".kept")).to_contain_text("2/4")
    expect(agency.locator(".difference")).to_have_text("-0.250")
    expect(page.locator("#slot-table tr[data-slot=all] .overturned")).to_contain_text("1/45")
    expect(page.locator("#throughput-chart")).to_be_visible()
    expect(page.locator("#throughput-chart g[data-items]")).to_have_count(3)
    expect(page.locator("#flows-table tbody tr")).to_have_count(3)

    alice = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    log_in(alice, live_server, "alice")
    alice.click("nav >> text=Profiles")
    expect(alice.locator("#profiles-table tbody tr")).to_have_count(1)
    alice.click("#profiles-table >> text=alice")
    alice.wait_for_load_state()  # htmx wires the digest's links once the page has loaded
    digest = alice.locator("#digest")
    expect(digest).to_contain_text("What adjudication decided where you differed from gold")
    expect(digest.locator(".digest-entry")).to_have_count(1)
    entry = digest.locator(".digest-entry[data-item=t4-0]")
    expect(entry.locator("tr[data-slot=agency] .why")).to_contain_text(
        "The team settled it by convention C1 v1"
    )
    expect(entry.locator("tr[data-slot=agency] .why q")).to_have_text(RULE)
    expect(entry.locator("tr[data-slot=intensity] .why")).to_contain_text("Decided by carol: a plain reading")
    digest.locator("a[rel=next]").click()
    expect(alice).to_have_url(f"{live_server.url}/profiles/alice/?page=2")
    entry = alice.locator("#digest .digest-entry[data-item=t3-0]")
    expect(entry.locator("tr[data-slot=intensity] .why")).to_contain_text("the text says very")
    expect(alice.locator("#slot-table")).to_be_visible()  # the rest of the page stayed
    alice.context.close()


def test_the_profile_pages_have_no_serious_accessibility_violation(page, live_server, team):  # noqa: F811
    check_pages(page, live_server, "carol", ["/profiles/", "/profiles/alice/", "/profiles/bob/"])
