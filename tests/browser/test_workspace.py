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
