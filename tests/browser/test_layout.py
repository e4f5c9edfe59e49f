"""Phone (390 px) and tablet (768 px) widths: no page scrolls sideways, the top menu wraps, the
annotation page stacks into one column, and wide tables scroll inside their own box."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.models import Assignment, Item

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
TABLET = {"width": 768, "height": 1024}

# The widest elements that stick out of the page, to name the culprit when the assertion fails.
OVERFLOW = """() => {
    const root = document.documentElement;
    const wide = [...document.querySelectorAll('body *')]
        .filter(el => el.getBoundingClientRect().right > root.clientWidth + 1)
        .filter(el => !el.closest('.scroll, table, pre') || el.matches('.scroll, table, pre'))
        .slice(0, 5)
        .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + '.' + [...el.classList].join('.'));
    return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide};
}"""


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def assert_no_sideways_scroll(page, url: str) -> None:
    page.goto(url)
    page.wait_for_load_state("load")
    settled(page)
    sizes = page.evaluate(OVERFLOW)
    assert sizes["scrollWidth"] <= sizes["clientWidth"], f"{url} scrolls sideways: {sizes}"


@pytest.fixture
def small_login(page, live_server):
    """Log in, then narrow the window (the login fixture waits on the desktop layout)."""

    def _login(username: str, viewport: dict) -> None:
        page.set_viewport_size(viewport)
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", f"{username}-pw")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return _login


@pytest.mark.parametrize("viewport", [PHONE, TABLET], ids=["phone", "tablet"])
def test_the_annotation_page_stacks_into_one_column_and_never_scrolls_sideways(
    page, live_server, small_login, submitted, annotator, viewport
):
    small_login("alice", viewport)
    a0 = Assignment.objects.filter(round=submitted, annotator=annotator).order_by("position").first()
    assert_no_sideways_scroll(page, f"{live_server.url}/work/a/{a0.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    text, work, aside = (page.locator(s).bounding_box() for s in ("#item-text", "#annotation", "aside"))
    # one column: text, then slots, then preview, each starting at the same left edge
    assert abs(text["x"] - work["x"]) < 2 and abs(work["x"] - aside["x"]) < 2
    assert text["y"] + text["height"] <= work["y"] + 1 and work["y"] + work["height"] <= aside["y"] + 1
    assert aside["x"] + aside["width"] <= viewport["width"]
    # the top menu wraps: every link of it is on screen
    for box in (link.bounding_box() for link in page.locator("header nav a").all()):
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    if viewport is PHONE:
        page.screenshot(path="/tmp/layout-annotate-390.png", full_page=True)


@pytest.mark.parametrize("viewport", [PHONE, TABLET], ids=["phone", "tablet"])
def test_an_annotators_pages_never_scroll_sideways(
    page, live_server, small_login, submitted, annotator, viewport
):
    small_login("alice", viewport)
    a0 = Assignment.objects.filter(round=submitted, annotator=annotator).order_by("position").first()
    for name, args in (
        ("home", []),
        ("queue", []),
        ("round_items", [submitted.pk]),
        ("history", [a0.pk]),
        ("explain", []),
        ("rule_set", []),
        ("guidelines", []),
    ):
        assert_no_sideways_scroll(page, live_server.url + reverse(name, args=args))


@pytest.mark.parametrize("viewport", [PHONE, TABLET], ids=["phone", "tablet"])
def test_the_conflicts_page_and_the_agreement_dashboard_never_scroll_sideways(
    page, live_server, small_login, submitted, adjudicator, viewport
):
    small_login("carol", viewport)
    conflicts = live_server.url + reverse("conflicts", args=[submitted.pk])
    assert_no_sideways_scroll(page, conflicts)
    expect(page.locator("#conflict-table tbody tr")).to_have_count(3)  # the round does have conflicts
    # the wide table scrolls inside its own box instead of widening the page
    table = page.evaluate(
        """() => {
            const table = document.getElementById('conflict-table');
            const box = table.closest('.scroll') || table;
            return {inner: box.scrollWidth, outer: box.clientWidth, right: box.getBoundingClientRect().right};
        }"""
    )
    assert table["right"] <= viewport["width"] + 1
    if viewport is PHONE:
        assert table["inner"] > table["outer"]  # wider than a phone: it scrolls, the page does not
        page.screenshot(path="/tmp/layout-conflicts-390.png", full_page=True)
    assert_no_sideways_scroll(page, live_server.url + reverse("agreement", args=[submitted.pk]))
    expect(page.locator("#agreement-table")).to_be_visible()
    if viewport is PHONE:
        page.screenshot(path="/tmp/layout-agreement-390.png", full_page=True)


@pytest.mark.parametrize("viewport", [PHONE], ids=["phone"])
def test_the_other_adjudicator_pages_never_scroll_sideways(
    page, live_server, small_login, submitted, adjudicator, viewport
):
    small_login("carol", viewport)
    item = Item.objects.filter(assignments__round=submitted).order_by("pk").first()
    for name, args in (
        ("adjudicate", []),
        ("conflict_item", [submitted.pk, item.pk]),
        ("flows", [submitted.pk]),
        ("anchoring", [submitted.pk]),
        ("gold_list", [submitted.pk]),
        ("conventions", []),
    ):
        assert_no_sideways_scroll(page, live_server.url + reverse(name, args=args))


@pytest.mark.parametrize("viewport", [PHONE], ids=["phone"])
def test_the_admin_pages_never_scroll_sideways(
    page, live_server, small_login, submitted, admin_user, viewport
):
    small_login("dana", viewport)
    for name in ("manage_import", "manage_item_sets", "jobs", "exports"):
        assert_no_sideways_scroll(page, live_server.url + reverse(name))


def test_a_refused_save_on_a_phone_opens_on_its_comparison(
    page, live_server, small_login, prefilled_round, annotator
):
    from annotator.services import annotation_submit
    from tests.factories import PRED

    small_login("alice", PHONE)
    a0 = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position").first()
    page.goto(f"{live_server.url}/work/a/{a0.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    annotation_submit(assignment=a0, user=annotator, values=PRED | {"agency": "someone-else"}, base_version=0)
    page.check("input[name=evaluation][value=feel-bad]")  # this tab still holds version 0
    page.click("#submit")
    expect(page.locator("#stale")).to_be_visible()  # the refusal (the page before had no notice)
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    notice = page.locator("#stale").bounding_box()
    assert 0 <= notice["y"] < PHONE["height"] / 2  # the notice, not the slots, is what one sees first
    sizes = page.evaluate(OVERFLOW)
    assert sizes["scrollWidth"] <= sizes["clientWidth"], sizes
    last = page.locator("#stale-compare tr[data-field=agency] td").last.bounding_box()
    assert last["x"] + last["width"] <= PHONE["width"]  # "yours" fits beside the saved value
    page.screenshot(path="/tmp/layout-stale-390.png")


def test_the_confusion_heatmap_keeps_its_size_on_a_phone_and_scrolls_in_its_box(
    page, live_server, small_login, submitted, adjudicator
):
    """Issue 25: the heatmap shrank to the phone's width, its numbers too small to read."""
    small_login("carol", PHONE)
    assert_no_sideways_scroll(page, live_server.url + reverse("evaluation", args=[submitted.pk]))
    sizes = page.evaluate(
        """() => {
            const svg = document.querySelector('svg.confusion-heatmap');
            const box = svg.closest('.chart-box');
            const cell = svg.querySelector('g.cell rect').getBoundingClientRect();
            return {cell: cell.width, inner: box.scrollWidth, outer: box.clientWidth,
                    right: box.getBoundingClientRect().right};
        }"""
    )
    assert sizes["cell"] == pytest.approx(40, abs=0.5)  # drawn at its own size
    assert sizes["inner"] > sizes["outer"] and sizes["right"] <= PHONE["width"]
    page.focus(".chart-box")  # the box is reached from the keyboard, and scrolls with the arrows
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.chart-box').scrollLeft > 0")
