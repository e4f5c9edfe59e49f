"""Quality checks in the browser: a gold item mixed into a round is served to its annotator like
any other item and scored on the quality page; an abandoned assignment returns to the pool."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotator.models import Annotation, Assignment
from annotator.roles import ANNOTATOR
from annotator.sampling import item_set_from_items
from annotator.services import round_create
from quality.models import Move, Opening
from quality.services import controls_add
from tests.conftest import _user
from tests.quality.conftest import make_round, own_items, queue

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fay(db):
    return _user("fay", ANNOTATOR)


@pytest.fixture
def gus(db):
    return _user("gus", ANNOTATOR)


def log_out(page) -> None:
    page.click("header form.who button[type=submit]")
    page.wait_for_load_state()


def test_a_gold_item_mixed_into_a_round_looks_like_any_other_and_is_scored(
    page, live_server, login, gold_round, fay, gus, admin_user
):
    target = make_round("target", [fay, gus])
    controls_add(round_=target, control_rate=0.125)  # one control each, in the middle of the queue
    mine = queue(target, fay)
    control = next(a for a in mine if a.control)
    assert 0 < mine.index(control) < len(mine) - 1

    login("fay", "fay-pw")
    page.goto(f"{live_server.url}/work/")
    page.click("tr[data-round='target'] a.button")
    for a in mine[: mine.index(control) + 1]:
        expect(page).to_have_url(f"{live_server.url}/work/a/{a.pk}/")
        expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
        # every item the same: prefilled by the parser, twelve slots, nothing that names a control
        expect(page.locator("fieldset[data-prefill]")).to_have_count(12)
        expect(page.locator("fieldset[data-slot=trigger] .prefill-state")).to_have_text("prefilled")
        assert "control" not in page.content().lower() and "gold" not in page.content().lower()
        page.keyboard.press("Enter")  # submit and next
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    assert Annotation.objects.filter(assignment=control).exists()
    log_out(page)

    login("dana", "dana-pw")
    page.goto(f"{live_server.url}/manage/rounds/{target.pk}/")
    # the round page loads the quality fragment: control progress apart from the round's work
    expect(page.locator("#control-progress")).to_contain_text("control items: 1 of 2 done")
    page.click("#quality-link")
    page.wait_for_load_state()
    row = page.locator("#control-scores tr[data-annotator=fay]")
    expect(row).to_contain_text("1")  # answered
    expect(row.locator("td.routed")).not_to_have_text("-")
    expect(page.locator("#control-scores tr[data-annotator=gus] td.routed")).to_have_text("-")


def test_an_abandoned_assignment_returns_to_the_pool(
    page, live_server, login, gold_round, fay, gus, admin_user
):
    item_set = item_set_from_items(name="set-three", items=own_items("three", 4))
    round_ = round_create(
        name="three", item_set=item_set, annotators=[fay, gus], mode="prefilled", prefill_parser="lex",
        annotators_per_item=1,
    )  # fmt: skip
    first = queue(round_, fay)[0]

    login("fay", "fay-pw")
    page.goto(f"{live_server.url}/work/a/{first.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    log_out(page)
    then = timezone.now() - timedelta(hours=25)
    assert Opening.objects.filter(assignment=first, annotator=fay).update(opened_at=then, active_at=then) == 1

    login("dana", "dana-pw")
    page.goto(f"{live_server.url}/rounds/{round_.pk}/quality/")
    page.click("#sweep-now button")
    page.wait_for_load_state()
    expect(page.locator(".messages")).to_contain_text(
        "1 abandoned assignments moved back to the pool (three 1)"
    )
    moved = page.locator(f"#moves tr[data-item='{first.item.source_id}']")
    expect(moved).to_contain_text("fay")
    expect(moved).to_contain_text("gus")
    first.refresh_from_db()
    assert first.annotator == gus and Move.objects.get().to_annotator == gus
    assert [
        a.position for a in Assignment.objects.filter(round=round_, annotator=fay).order_by("position")
    ] == [0]
