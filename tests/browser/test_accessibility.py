"""Issue 25: every page, for each role, has no serious or critical axe-core violation (WCAG 2.2 AA
and best practices), at desktop width, in the dark theme and on a 390 px phone (one load, three
checks); reduced motion is honoured."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotator.models import Assignment, Item
from contrasts.services import pair_add, pair_set_create
from tests.browser.accessibility import axe_violations, describe

pytestmark = pytest.mark.django_db(transaction=True)

DESKTOP = {"width": 1200, "height": 900}
PHONE = {"width": 390, "height": 844}


def settled(page) -> None:
    page.wait_for_load_state("load")
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def three_views(page) -> dict[str, list[dict]]:
    """The loaded page's violations at desktop width, in the dark theme and on a 390 px phone: one
    load, checked three times (the theme and the width change in place, as a reader's would)."""
    found = {"desktop": axe_violations(page)}
    page.emulate_media(color_scheme="dark")
    found["dark"] = axe_violations(page)
    page.emulate_media(color_scheme="light")
    page.set_viewport_size(PHONE)
    # the page answers a resize in its next animation frame (static/js/site.js): wait for it
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    found["390 px"] = axe_violations(page)
    page.set_viewport_size(DESKTOP)
    return found


# each visible disclosure's label below WCAG 2.2's target size (24 CSS px): its text and height
SMALL_SUMMARIES = """() => [...document.querySelectorAll('summary')]
    .map(s => [s.textContent.trim().slice(0, 40), s.getBoundingClientRect().height])
    .filter(([, height]) => height > 0 && height < 24)"""


def check_pages(page, live_server, username: str, urls: list[str]) -> None:
    page.set_viewport_size(DESKTOP)
    page.emulate_media(color_scheme="light")
    found, small = {}, {}
    if username == "alice":  # the pages of someone not logged in, once
        for url in ("/accounts/login/", reverse("password_reset")):
            page.goto(live_server.url + url)
            settled(page)
            found[url] = three_views(page)
        page.goto(f"{live_server.url}/accounts/login/")
    else:
        page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"{username}-pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    for url in urls:
        page.goto(live_server.url + url)
        settled(page)
        # axe skips what is hidden: open the Jobs page's start forms (closed disclosures) so it checks them
        page.evaluate("() => document.querySelectorAll('details.job-start').forEach(d => { d.open = true; })")
        found[url] = three_views(page)
        small[url] = page.evaluate(SMALL_SUMMARIES)
    report = "\n".join(
        f"{url}, {view}:\n{describe(v)}" for url, views in found.items() for view, v in views.items() if v
    )
    assert not report, "serious or critical accessibility violations:\n" + report
    # axe lets a small target pass when nothing is near it; WCAG 2.2's 24 px is kept by every
    # disclosure (the users page's "Set a new one" was 22.5 px)
    assert {url: s for url, s in small.items() if s} == {}, "disclosures below 24 px"


def test_an_annotators_pages(page, live_server, submitted, annotator):
    a0 = Assignment.objects.filter(round=submitted, annotator=annotator).order_by("position").first()
    urls = [
        reverse(name, args=args)
        for name, args in (
            ("home", []), ("queue", []), ("annotate", [a0.pk]), ("round_items", [submitted.pk]),
            ("history", [a0.pk]), ("explain", []), ("rule_set", []), ("guidelines", []),
            ("password_change", []), ("account_tokens", []),
        )
    ]  # fmt: skip
    check_pages(page, live_server, "alice", urls)


def test_an_adjudicators_pages(page, live_server, submitted, adjudicator):
    item = Item.objects.filter(assignments__round=submitted).order_by("pk").first()
    pairs = pair_set_create(user=adjudicator, name="pairs")
    pair_add(user=adjudicator, pair_set=pairs, item=item.source_id, text="A rewrite.", invariance=True)
    r = submitted.pk
    urls = [
        reverse(name, args=args)
        for name, args in (
            ("home", []), ("adjudicate", []), ("agreement", [r]), ("conflicts", [r]),
            ("conflict_item", [r, item.pk]), ("flows", [r]), ("anchoring", [r]), ("gold_list", [r]),
            ("gold_item", [r, item.pk]), ("evaluation", [r]), ("judgements", [r]), ("conventions", []),
            ("parsers", []), ("rule_revision_new", []), ("contrasts", []), ("contrast_set", [pairs.pk]),
        )
    ]  # fmt: skip
    check_pages(page, live_server, "carol", urls)


def test_an_admins_pages(page, live_server, submitted, admin_user):
    from learning.services import queue_compute, queue_policy_set

    queue_compute(policy=queue_policy_set(round_=submitted, user=None, order="mixed", random_share=0.5))
    urls = [
        reverse(name, args=args)
        for name, args in (
            ("home", []), ("manage_import", []), ("manage_item_sets", []),
            ("manage_item_set", [submitted.item_set_id]), ("manage_rounds", []), ("manage_round_new", []),
            ("manage_round", [submitted.pk]), ("manage_users", []), ("jobs", []), ("exports", []),
            ("learning_queue", [submitted.pk]),
        )
    ]  # fmt: skip
    check_pages(page, live_server, "dana", urls)


def test_the_dark_theme_and_reduced_motion_follow_the_readers_system(page, live_server, annotator):
    page.goto(f"{live_server.url}/accounts/login/")
    background = "() => getComputedStyle(document.body).backgroundColor"
    assert page.evaluate(background) == "rgb(250, 251, 252)"
    page.emulate_media(color_scheme="dark")
    assert page.evaluate(background) == "rgb(21, 25, 30)"
    page.evaluate(
        "() => document.body.insertAdjacentHTML('beforeend', '<span class=\"htmx-request htmx-indicator\">')"
    )
    duration = "() => getComputedStyle(document.querySelector('.htmx-indicator')).transitionDuration"
    assert page.evaluate(duration) == "0.2s"
    page.emulate_media(reduced_motion="reduce")
    assert page.evaluate(duration) == "0s"
    # the skip link is the first thing the keyboard reaches, shows when focused, and leads past the menu
    first = "() => document.querySelector('a[href], button, input:not([type=hidden]), select').className"
    assert page.evaluate(first) == "skip"
    page.focus("a.skip")
    expect(page.locator("a.skip")).to_be_in_viewport()
    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "main"
