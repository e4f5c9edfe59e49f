import re

import pytest
from playwright.sync_api import expect

from annotator.models import Annotation, Assignment
from tests.factories import PRED

pytestmark = pytest.mark.django_db(transaction=True)


def test_annotate_an_item_with_the_keyboard_only(page, live_server, login, prefilled_round, annotator):
    login("alice", "alice-pw")
    page.goto(f"{live_server.url}/work/")
    page.click("tr[data-round='prefilled'] a.button")
    first = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position")
    a0, a1 = first[0], first[1]
    expect(page).to_have_url(f"{live_server.url}/work/a/{a0.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    expect(page.locator("fieldset[data-slot=trigger] .prefill-state")).to_have_text("prefilled")
    lines = page.locator("#preview .lines")
    expect(lines).to_contain_text("I did something")

    # Keys only: move to agency (third slot) and choose someone-else (2), then evaluation.
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("2")
    expect(page.locator("fieldset[data-slot=agency] .prefill-state")).to_have_text("changed from i")
    expect(lines).to_contain_text("someone else did something")  # the preview followed
    for _ in range(3):  # realization -> time_direction -> want -> evaluation
        page.keyboard.press("ArrowDown")
    page.keyboard.press("2")  # feel-bad
    expect(lines).to_contain_text("I feel something bad because of this")
    page.keyboard.press("u")  # flag unrecoverable
    page.keyboard.press("Enter")  # submit and next

    expect(page).to_have_url(f"{live_server.url}/work/a/{a1.pk}/")
    saved = Annotation.objects.get(assignment=a0)
    assert (saved.agency, saved.evaluation, saved.flags) == ("someone-else", "feel-bad", ["unrecoverable"])
    assert "agency" not in saved.kept_prefill and "trigger" in saved.kept_prefill
    assert saved.time_spent_ms > 0


def test_a_blind_round_shows_no_prefilled_value(page, live_server, login, blind_round, annotator):
    login("alice", "alice-pw")
    page.goto(f"{live_server.url}/work/")
    page.click("tr[data-round='blind'] a.button")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    assert page.locator(".prefill-state").count() == 0
    assert page.locator("fieldset[data-prefill]").count() == 0
    expect(page.locator("input[name=evaluation][value=neither]")).to_be_checked()  # default, not the parser's
    expect(page.locator("input[name=trigger][value=none]")).to_be_checked()
    assert PRED["trigger"] not in page.locator("#preview").inner_text()


def mine(round_, user) -> list[Assignment]:
    return list(Assignment.objects.filter(round=round_, annotator=user).order_by("position"))


def open_item(page, live_server, assignment) -> None:
    page.goto(f"{live_server.url}/work/a/{assignment.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()


@pytest.mark.parametrize(
    ("selector", "lands_on"),
    [
        (".annotate-head a:has-text('My work')", "/work/"),
        (".annotate-head a:has-text('History')", "/work/a/{pk}/history/"),
        ("header nav a:has-text('Guidelines')", "/guidelines/"),
        ("header nav a:has-text('Sandbox')", "/explain/"),
        ("#next-item", "/work/a/{next_pk}/"),
        ("#round-items", "/work/round/{round_pk}/items/"),
    ],
)
def test_enter_on_a_focused_link_follows_it_and_saves_nothing(
    page, live_server, login, prefilled_round, annotator, selector, lands_on
):
    login("alice", "alice-pw")
    a0 = mine(prefilled_round, annotator)[0]
    open_item(page, live_server, a0)
    page.focus(selector)
    page.keyboard.press("Enter")
    a1 = mine(prefilled_round, annotator)[1]
    page.wait_for_url(live_server.url + lands_on.format(pk=a0.pk, next_pk=a1.pk, round_pk=prefilled_round.pk))
    assert not Annotation.objects.exists()
    assert Assignment.objects.get(pk=a0.pk).status == "pending"


def test_enter_on_the_focused_skip_button_skips_and_saves_nothing(
    page, live_server, login, prefilled_round, annotator
):
    login("alice", "alice-pw")
    a0, a1 = mine(prefilled_round, annotator)[:2]
    open_item(page, live_server, a0)
    page.focus("button:has-text('Skip')")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/work/a/{a1.pk}/?skipped={a0.pk}")  # the skip offered back
    assert not Annotation.objects.exists()
    assert Assignment.objects.get(pk=a0.pk).status == "skipped"


def test_enter_from_a_radio_or_the_page_body_still_submits(
    page, live_server, login, prefilled_round, annotator
):
    login("alice", "alice-pw")
    a0, a1, a2 = mine(prefilled_round, annotator)[:3]
    open_item(page, live_server, a0)
    page.focus("input[name=agency][value=someone-else]")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/work/a/{a1.pk}/")
    assert Annotation.objects.get(assignment=a0).version == 1
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    page.evaluate("() => document.activeElement.blur()")  # focus back on the page body
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/work/a/{a2.pk}/")
    assert Annotation.objects.get(assignment=a1).version == 1


def test_a_mouse_click_chooses_a_value_in_a_slot_that_was_not_current(
    page, live_server, login, prefilled_round, annotator
):
    """Making a slot current shows its values' help, which moves them: the click must land anyway."""
    login("alice", "alice-pw")
    open_item(page, live_server, mine(prefilled_round, annotator)[0])
    for slot, value in (("agency", "someone-else"), ("intensity", "very"), ("experiencer", "people")):
        page.click(f"input[name={slot}][value={value}]")
        expect(page.locator(f"input[name={slot}][value={value}]")).to_be_checked()
        expect(page.locator(f"fieldset[data-slot={slot}]")).to_have_class(re.compile(r"\bcurrent\b"))


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling, .htmx-swapping')")


def test_an_annotator_moves_between_items_and_through_the_list_of_their_items(
    page, live_server, login, prefilled_round, annotator
):
    a = mine(prefilled_round, annotator)
    Assignment.objects.filter(pk=a[1].pk).update(status="skipped")
    login("alice", "alice-pw")
    open_item(page, live_server, a[0])
    expect(page.locator("#prev-item")).to_have_count(0)  # the first item has no previous one
    page.click("#next-item")
    page.wait_for_url(f"{live_server.url}/work/a/{a[1].pk}/")  # skipped, still reachable
    page.click("#next-item")
    page.wait_for_url(f"{live_server.url}/work/a/{a[2].pk}/")
    page.click("#prev-item")
    page.wait_for_url(f"{live_server.url}/work/a/{a[1].pk}/")

    page.click("#round-items")
    page.wait_for_url(f"{live_server.url}/work/round/{prefilled_round.pk}/items/")
    rows = page.locator("#round-items-table tbody tr")
    expect(rows).to_have_count(4)
    page.select_option("#item-filter select[name=status]", "skipped")  # htmx swaps the list in place
    expect(rows).to_have_count(1)
    expect(page).to_have_url(f"{live_server.url}/work/round/{prefilled_round.pk}/items/?status=skipped")
    settled(page)
    expect(rows.first).to_contain_text("skipped")
    rows.first.locator("a").click()
    page.wait_for_url(f"{live_server.url}/work/a/{a[1].pk}/")
    assert not Annotation.objects.exists()


def test_the_item_text_stays_in_view_while_the_slots_scroll(
    page, live_server, login, prefilled_round, annotator
):
    login("alice", "alice-pw")
    open_item(page, live_server, mine(prefilled_round, annotator)[0])
    for _ in range(11):  # down to the last slot with the keyboard
        page.keyboard.press("j")
    expect(page.locator("fieldset[data-slot=intensity]")).to_have_class(re.compile(r"\bcurrent\b"))
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_function("() => window.scrollY > 0")
    text = page.locator("#item-text").bounding_box()
    assert text["y"] >= 0 and text["y"] + text["height"] <= 900  # on screen
    page.keyboard.press("k")  # back up: the current slot comes into view below the text, not under it
    for _ in range(10):
        page.keyboard.press("k")
    expect(page.locator("fieldset[data-slot=experiencer]")).to_have_class(re.compile(r"\bcurrent\b"))
    page.wait_for_function(
        """() => {
            const text = document.getElementById('item-text').getBoundingClientRect();
            const slot = document.querySelector('fieldset.current').getBoundingClientRect();
            return slot.top >= text.bottom - 1;
        }"""
    )


def test_a_change_not_saved_survives_following_a_link_as_a_draft(
    page, live_server, login, prefilled_round, annotator
):
    """Unsaved edits vanished on Next, Previous or any link (issue 25)."""
    login("alice", "alice-pw")
    a0, a1 = mine(prefilled_round, annotator)[:2]
    open_item(page, live_server, a0)
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("2")  # agency: someone-else, not saved
    expect(page.locator("#annotation[data-draft=kept]")).to_be_visible()  # the server has it
    expect(page.locator("#draft-state")).to_contain_text("draft kept")
    page.click("#next-item")
    expect(page).to_have_url(f"{live_server.url}/work/a/{a1.pk}/")
    page.click("#prev-item")
    expect(page.locator("#draft-restored")).to_contain_text("not saved")
    expect(page.locator("input[name=agency][value=someone-else]")).to_be_checked()
    assert not Annotation.objects.filter(assignment=a0).exists()

    # a change the server has not taken yet (its draft held on the way, however slow the machine):
    # leaving asks first
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    page.route("**/draft/", lambda route: None)  # never answered
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    for _ in range(6):  # to evaluation
        page.keyboard.press("j")
    page.keyboard.press("2")  # feel-bad: a change
    page.click("#next-item")
    expect(page.locator("#annotation")).to_be_visible()
    assert asked == ["beforeunload"] and page.url == f"{live_server.url}/work/a/{a0.pk}/"


def test_z_takes_back_the_last_slot_change_and_a_skip_is_taken_back_from_its_notice(
    page, live_server, login, prefilled_round, annotator
):
    login("alice", "alice-pw")
    a0, a1 = mine(prefilled_round, annotator)[:2]
    open_item(page, live_server, a0)
    agency = page.locator("fieldset[data-slot=agency] .prefill-state")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("2")  # agency: someone-else
    expect(agency).to_have_text("changed from i")
    page.keyboard.press("z")
    expect(page.locator("input[name=agency][value=i]")).to_be_checked()
    expect(agency).to_have_text("prefilled")
    page.keyboard.press("z")  # nothing more to take back
    expect(page.locator("input[name=agency][value=i]")).to_be_checked()

    page.keyboard.press("Escape")
    page.keyboard.press("x")  # skip
    expect(page).to_have_url(re.compile(rf"/work/a/{a1.pk}/\?skipped={a0.pk}$"))
    page.click("#unskip")
    expect(page).to_have_url(f"{live_server.url}/work/a/{a0.pk}/")
    assert Assignment.objects.get(pk=a0.pk).status == "pending"
