"""One item open in two tabs: the second save is refused, compared, and only replaced on purpose."""

import pytest
from playwright.sync_api import expect

from annotator.models import Annotation, AnnotationRevision, Assignment

pytestmark = pytest.mark.django_db(transaction=True)


def two_tabs_on_one_item(page, live_server, login, round_, user):
    """Both tabs load the item at version 0; tab one saves agency=someone-else; tab two chooses
    evaluation=feel-bad, presses Enter and is refused."""
    login("alice", "alice-pw")
    a0, a1 = Assignment.objects.filter(round=round_, annotator=user).order_by("position")[:2]
    url = f"{live_server.url}/work/a/{a0.pk}/"
    tab1, tab2 = page, page.context.new_page()
    for tab in (tab1, tab2):
        tab.goto(url)
        expect(tab.locator("#annotation[data-ready=true]")).to_be_visible()
    tab1.check("input[name=agency][value=someone-else]")
    tab1.keyboard.press("Enter")
    tab1.wait_for_url(f"{live_server.url}/work/a/{a1.pk}/")
    tab2.check("input[name=evaluation][value=feel-bad]")
    tab2.keyboard.press("Enter")
    expect(tab2.locator("#stale")).to_contain_text("saved elsewhere")
    return a0, a1, url, tab2


def test_enter_stays_refused_and_replace_it_with_mine_overwrites_on_purpose(
    page, live_server, login, prefilled_round, annotator
):
    a0, a1, url, tab2 = two_tabs_on_one_item(page, live_server, login, prefilled_round, annotator)
    differs = tab2.locator("#stale-compare tr.differs")
    expect(differs).to_have_count(2)
    expect(tab2.locator("#stale-compare tr[data-field=agency]")).to_contain_text("someone-else")
    expect(tab2.locator("#stale-compare tr[data-field=evaluation]")).to_contain_text("feel-bad")
    expect(tab2.locator("input[name=evaluation][value=feel-bad]")).to_be_checked()  # mine, still here

    expect(tab2.locator("#annotation[data-ready=true]")).to_be_visible()
    tab2.evaluate("() => { document.body.dataset.before = 'enter'; document.activeElement.blur(); }")
    tab2.keyboard.press("Enter")  # a plain submit again: still refused, nothing written
    # wait for the answer to this submit (a fresh page, without the mark), not the page before it
    expect(tab2.locator("body:not([data-before]) #annotation[data-ready=true]")).to_be_visible()
    expect(tab2.locator("#stale")).to_contain_text("version 1")
    assert tab2.url == url
    assert Annotation.objects.get(assignment=a0).version == 1

    tab2.click("#replace-mine")
    tab2.wait_for_url(f"{live_server.url}/work/a/{a1.pk}/")
    saved = Annotation.objects.get(assignment=a0)
    assert (saved.version, saved.agency, saved.evaluation) == (2, "i", "feel-bad")
    assert AnnotationRevision.objects.filter(annotation=saved).count() == 2


def test_discard_mine_loads_the_saved_version_without_posting(
    page, live_server, login, prefilled_round, annotator
):
    a0, _, url, tab2 = two_tabs_on_one_item(page, live_server, login, prefilled_round, annotator)
    posts = []
    # the page's only post on load says it was opened (quality's abandoned work): not a save
    saves = lambda request: request.method == "POST" and not request.url.endswith("/opened/")  # noqa: E731
    tab2.on("request", lambda request: posts.append(request.url) if saves(request) else None)
    tab2.click("#discard-mine")
    expect(tab2.locator("#stale")).to_have_count(0)
    expect(tab2.locator("input[name=agency][value=someone-else]")).to_be_checked()  # tab one's save
    expect(tab2.locator("input[name=evaluation][value=feel-good]")).to_be_checked()
    expect(tab2.locator("input[name=base_version]")).to_have_value("1")
    assert tab2.url == url and posts == []
    assert Annotation.objects.get(assignment=a0).version == 1
