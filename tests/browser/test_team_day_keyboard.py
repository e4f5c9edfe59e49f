"""Issue 25's acceptance: a team's day on the real crowd-enVent test file, keyboard only for the
annotators and the adjudicator. A draft survives a navigation, an unchanged re-submit writes
nothing, a refused gold save keeps its choices, the gold queue is worked with save-and-next and
the take-A/B keys, a trained parser is chosen by name, and search finds an item by a word of its
text. (The setup steps an admin does in the browser have their own walk: test_team_day.py.)"""

import io
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from adjudication.models import GoldItem
from annotator.models import Annotation, AnnotationRevision, Assignment, Item, ItemSet, Round
from jobs.models import Job
from jobs.services import job_run
from registry.models import RegisteredParser
from tests.shared_data import shared_data
from training.train import job_train_start

pytestmark = pytest.mark.django_db(transaction=True)
N_ITEMS = 3


def press_link(page, selector: str) -> None:
    """Follow a link the way a keyboard user does: focus it, then Enter. The Enter goes only once
    the link has the focus (on an annotation page Enter elsewhere saves the item), and the call
    returns once the next page has loaded."""
    link = page.locator(selector)
    link.focus()
    expect(link).to_be_focused()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state()  # the next page's scripts listen to the keys from here on


def option_value(page, select: str, starts: str) -> str:
    """The value of the prefill form's option whose label starts so (labels carry counts)."""
    options = page.locator(f"#prefill-form select[name={select}] option")
    found = [o.get_attribute("value") for o in options.all() if o.inner_text().startswith(starts)]
    assert len(found) == 1, (select, starts, options.all_inner_texts())
    return found[0]


def to_agency(page) -> None:
    """On a gold record, from the keyboard: the first slot that differs is current; where alice
    left trigger at none (the item she drafted) take bob's trigger (b) and move on (j)."""
    if page.locator("#gold-slots tr[data-slot=trigger].differs").count():
        page.keyboard.press("b")
        page.keyboard.press("j")


def annotate_all(page, live_server, login, username: str, agency_key: str, left: int = N_ITEMS) -> None:
    """The ``left`` items still to do in the round, from the keyboard: trigger
    someone-did-something, agency by key."""
    login(username, f"{username}-pw")
    page.goto(f"{live_server.url}/work/")
    press_link(page, "tr[data-round='walk'] a.button")
    for _ in range(left):
        expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
        url = page.url
        page.keyboard.press("j")
        page.keyboard.press("2")  # trigger: someone-did-something; a choice moves on to agency
        page.keyboard.press(agency_key)
        page.keyboard.press("Enter")
        page.wait_for_url(lambda u, url=url: u != url)
    expect(page.locator(".messages")).to_contain_text("every item is done")
    page.click("button:has-text('Log out')")


def test_a_team_day_on_the_real_test_file_keyboard_only(
    page, live_server, login, annotator, other_annotator, adjudicator, admin_user, tmp_path
):
    call_command(
        "import_items", str(shared_data("crowd-enVent", "crowd-enVent-test.tsv")), stdout=io.StringIO()
    )
    assert Item.objects.count() == 540
    call_command("draw_item_set", "walk", "--seed", "25", "--size", str(N_ITEMS), stdout=io.StringIO())
    call_command(
        "create_round", "walk", "--item-set", "walk", "--annotators", "alice,bob", stdout=io.StringIO()
    )
    round_ = Round.objects.get(name="walk")
    first, second = Assignment.objects.filter(round=round_, annotator=annotator).order_by("position")[:2]

    # alice: a change not saved survives leaving the item and coming back
    login("alice", "alice-pw")
    page.goto(f"{live_server.url}/work/")
    press_link(page, "tr[data-round='walk'] a.button")
    expect(page).to_have_url(f"{live_server.url}/work/a/{first.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("1")  # agency: i, the one change (the draft kept is then this one)
    expect(page.locator("#annotation[data-draft=kept]")).to_be_visible()
    press_link(page, "#next-item")
    expect(page).to_have_url(f"{live_server.url}/work/a/{second.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()  # its keys are listened to
    press_link(page, "#prev-item")
    expect(page).to_have_url(f"{live_server.url}/work/a/{first.pk}/")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()  # its keys are listened to
    expect(page.locator("#draft-restored")).to_contain_text("not saved")
    expect(page.locator("input[name=agency][value=i]")).to_be_checked()
    assert not Annotation.objects.filter(assignment=first).exists()
    page.keyboard.press("Enter")  # saved, on to the next
    expect(page).to_have_url(f"{live_server.url}/work/a/{second.pk}/")
    # its script ready: as it starts it puts the focus in the form, which took it from the link
    # focused next (a CI run: "#prev-item" never focused)
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    saved = Annotation.objects.get(assignment=first)
    assert (saved.agency, saved.version) == ("i", 1)

    # an unchanged re-submit of a done item writes nothing
    press_link(page, "#prev-item")
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    expect(page.locator("#saved-version")).to_contain_text("saved v1")
    revisions = AnnotationRevision.objects.count()
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("No change: version 1 is kept")
    assert AnnotationRevision.objects.count() == revisions
    assert Annotation.objects.get(assignment=first).version == 1
    page.click("button:has-text('Log out')")

    annotate_all(page, live_server, login, "alice", "1", left=N_ITEMS - 1)  # the rest: agency i
    annotate_all(page, live_server, login, "bob", "2")  # bob reads agency someone-else
    assert Annotation.objects.filter(assignment__round=round_).count() == 2 * N_ITEMS

    # carol works the gold queue from the keyboard: take A/B, a refused save, save and next
    login("carol", "carol-pw")
    page.goto(f"{live_server.url}/adjudicate/rounds/{round_.pk}/gold/")
    expect(page.locator(".messages")).to_contain_text(f"{N_ITEMS} gold records opened")
    rows = page.locator("#gold-table tbody tr")
    expect(rows).to_have_count(N_ITEMS)
    press_link(page, "#gold-table tbody tr >> nth=0 >> text=resolve")
    expect(page.locator("#resolve-form[data-ready=true]")).to_have_count(1)
    first_gold = page.locator("h1").inner_text()
    to_agency(page)
    page.keyboard.press("b")
    expect(page.locator("#gold-slots select[name=agency]")).to_have_value("someone-else")
    page.keyboard.press("a")
    expect(page.locator("#gold-slots select[name=agency]")).to_have_value("i")
    page.focus("input[name=why]")
    page.keyboard.type(" ")  # blank to the server, present to the browser's own check
    page.keyboard.press("Control+Enter")
    expect(page.locator("#resolve-form")).to_contain_text("why: say why")
    expect(page.locator("#gold-slots select[name=agency]")).to_have_value("i")  # the choice kept
    expect(page.locator("#resolve-form[data-ready=true]")).to_have_count(1)  # the keys, again
    page.focus("input[name=why]")
    page.keyboard.press("Control+a")
    page.keyboard.type("the writer acts")
    page.keyboard.press("Control+Enter")  # save and open the next open record
    expect(page.locator("h1")).not_to_have_text(first_gold)
    for left in range(N_ITEMS - 1, 0, -1):
        expect(page.locator("#resolve-form[data-ready=true]")).to_have_count(1)
        heading = page.locator("h1").inner_text()
        to_agency(page)
        page.keyboard.press("a")
        page.focus("input[name=why]")
        page.keyboard.type("the writer acts")
        page.keyboard.press("Control+Enter")
        if left > 1:
            expect(page.locator("h1")).not_to_have_text(heading)
    expect(page.locator(".messages")).to_contain_text("No open record is left in this round.")
    gold = GoldItem.objects.filter(round=round_)
    assert gold.filter(status="resolved").count() == N_ITEMS
    assert {g.construals.get(index=1).slots["agency"] for g in gold} == {"i"}
    page.click("button:has-text('Log out')")

    # a parser trained on the gold, chosen by its name for a prefill
    job = job_train_start(user=admin_user, round_=round_, method="classifier", enqueue=False,
                          parser_name="walk-clf", output_dir=str(tmp_path / "walk-clf"))  # fmt: skip
    job_run(job.pk)
    assert RegisteredParser.objects.get(name="walk-clf").spec == "walk-clf@1"
    login("dana", "dana-pw")
    page.goto(f"{live_server.url}/jobs/")
    page.click("#start-prefill summary")
    target = option_value(page, "target", f"walk ({N_ITEMS} items)")
    page.select_option("#prefill-form select[name=target]", target)
    page.select_option("#prefill-form select[name=backend]", "classifier")
    page.select_option("#prefill-form select[name=parser]", option_value(page, "parser", "walk-clf"))
    page.click("#prefill-form button[type=submit]")
    prefill = Job.objects.get(kind="prefill")
    expect(page).to_have_url(f"{live_server.url}/jobs/{prefill.pk}/")
    assert prefill.params["model"] == "walk-clf@1", prefill.params

    # search finds an item of the set by a word of its text
    item = ItemSet.objects.get(name="walk").items.order_by("pk").first()
    word = max(re.findall(r"[A-Za-z]{5,}", item.text), key=len)
    page.goto(f"{live_server.url}/manage/item-sets/{ItemSet.objects.get(name='walk').pk}/")
    page.fill("#item-search input[name=q]", word)
    page.keyboard.press("Enter")
    expect(page.locator(f"tr[data-item='{item.source_id}']")).to_be_visible()
