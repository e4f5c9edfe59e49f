"""Issue 13's acceptance: a team goes from an empty database to a downloaded export in the
browser alone. The only shell step is the documented first-admin command (README); after it,
an admin imports the real crowd-enVent test file, creates the team's accounts, draws an item set
and starts a round; two annotators label it; two adjudicators settle its conflict with a
convention; the admin exports the gold through a real worker and downloads the archive.
(`make run` would add demo users; this starts from no user at all, the stricter case.)"""

import io
import json
import zipfile

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from adjudication.models import GoldItem
from annotator.models import Annotation, Item
from tests.browser.job_page import wait_until_done
from tests.shared_data import shared_data

pytestmark = pytest.mark.django_db(transaction=True)

TEAM = {  # username -> role
    "ann1": "annotator",
    "ann2": "annotator",
    "judge1": "adjudicator",
    "judge2": "adjudicator",
}
N_ITEMS = 3


@pytest.fixture
def worker_env(tmp_path, settings):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"  # the page serves downloads from where the worker writes
    return {"NSM_EXPORT_DIR": str(settings.NSM_EXPORT_DIR)}


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def settled(page) -> None:
    page.wait_for_function("() => !document.querySelector('.htmx-request')")


def annotate_round(page, live_server, username: str, agency: str) -> None:
    """Label every item of the round the same way but for agency (the conflict to settle)."""
    log_in(page, live_server, username, f"{username}-secret-1")
    page.click("nav >> text=My work")
    page.click("tr[data-round='team-day'] a.button")
    for _ in range(N_ITEMS):
        expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
        url = page.url
        for slot, value in (
            ("trigger", "someone-did-something"),
            ("agency", agency),
            ("realization", "happened"),
            ("want", "want"),
            ("evaluation", "feel-good"),
            ("eval_target", "self"),
        ):
            page.check(f"input[name={slot}][value={value}]")
            settled(page)
        page.click("#submit")
        page.wait_for_url(lambda u, url=url: u != url)
    expect(page.locator(".messages")).to_contain_text("every item is done")
    page.click("button:has-text('Log out')")


def test_a_team_builds_and_exports_a_gold_corpus_in_the_browser(
    browser, page, live_server, worker, monkeypatch
):
    crowd_envent_test = shared_data("crowd-enVent", "crowd-enVent-test.tsv")
    # The one documented shell step on a fresh database: the first admin.
    monkeypatch.setattr("sys.stdin", io.StringIO("root-secret-1\n"))
    call_command("create_admin", "root", "--password-stdin", stdout=io.StringIO())
    log_in(page, live_server, "root", "root-secret-1")

    # Import the real test split: a preview first, then the confirmed write.
    page.click("nav >> text=Import")
    page.set_input_files("input[name=file]", str(crowd_envent_test))
    page.click("#import-upload button[type=submit]")
    expect(page.locator("#import-preview")).to_be_visible()
    assert Item.objects.count() == 0
    page.click("#import-confirm button[type=submit]")
    expect(page.locator(".messages .import-report")).to_contain_text("540")
    assert Item.objects.count() == 540

    # The team's accounts.
    page.click("nav >> text=Users")
    for username, role in TEAM.items():
        page.fill("#user-form input[name=username]", username)
        page.fill("#user-form input[name=password]", f"{username}-secret-1")
        page.check(f"#user-form input[name=roles][value={role}]")
        page.click("#user-form button[type=submit]")
        expect(page.locator("#user-created")).to_contain_text(username)

    # An item set and a blind round for the two annotators.
    page.goto(f"{live_server.url}/manage/item-sets/")
    page.fill("input[name=name]", "team-day-set")
    page.fill("input[name=seed]", "13")
    page.fill("input[name=size]", str(N_ITEMS))
    page.click("form.card button[type=submit]")
    expect(page.locator(".messages .draw-report")).to_contain_text(f"{N_ITEMS} items")
    page.click("nav >> text=Rounds")
    page.click("text=New round")
    page.wait_for_load_state()  # htmx binds the item set's change handler once the page has loaded
    page.fill("#round-form input[name=name]", "team-day")
    page.select_option("#round-form select[name=item_set]", label="team-day-set")
    settled(page)
    for username in ("ann1", "ann2"):
        page.check(f"#round-form label:has-text('{username}') input[name=annotators]")
    page.check("#round-form input[name=mode][value=blind]")
    page.click("#round-submit")
    expect(page.locator("#annotators")).to_contain_text("ann1")
    page.click("button:has-text('Log out')")

    # Two annotators disagree on agency, item by item.
    annotate_round(page, live_server, "ann1", "i")
    annotate_round(page, live_server, "ann2", "someone-else")
    assert Annotation.objects.filter(assignment__round__name="team-day").count() == 2 * N_ITEMS

    # The adjudicators settle the flow with a convention.
    log_in(page, live_server, "judge1", "judge1-secret-1")
    page.click("nav >> text=Agreement")
    page.click("tr:has-text('team-day') a:text-is('flows')")
    page.click("tr[data-flow='agency:i:someone-else'] a.propose")
    page.select_option("#propose-form select[name=chosen]", "i")
    page.fill("#propose-form textarea[name=rule]", "The writer's own doing keeps agency=i.")
    page.click("#propose-form button[type=submit]")
    expect(page.locator("#convention-status")).to_have_text("proposed")
    page.check("#vote-form input[value=yes]")
    page.click("#vote-form button[type=submit]")
    convention_url = page.url
    page.click("button:has-text('Log out')")

    log_in(page, live_server, "judge2", "judge2-secret-1")
    page.goto(convention_url)
    page.check("#vote-form input[name=approve][value=yes]")
    page.click("#vote-form button[type=submit]")
    expect(page.locator("#convention-status")).to_have_text("accepted")
    page.click("#gold-open-button")  # the gold records open at a press, not on a page view
    expect(page.locator(".messages")).to_contain_text(f"{N_ITEMS} gold records opened")
    expect(page.locator("#preview tbody tr")).to_have_count(N_ITEMS)
    page.click("#apply")
    expect(page.locator(".messages")).to_contain_text(f"{N_ITEMS} items settled")
    page.click("button:has-text('Log out')")
    gold = GoldItem.objects.filter(round__name="team-day")
    assert gold.count() == N_ITEMS and not gold.exclude(status=GoldItem.Status.RESOLVED).exists()

    # The admin exports the gold, without verification, and downloads it.
    log_in(page, live_server, "root", "root-secret-1")
    page.click("nav >> text=Exports")
    page.select_option("select[name=round]", label="team-day")
    expect(page.locator("input[name=verify]")).not_to_be_checked()  # no verifier model is configured
    page.click("#export-form button[type=submit]")
    wait_until_done(page)
    with page.expect_download() as info:
        page.click("#export-download")
    with zipfile.ZipFile(info.value.path()) as zf:
        records = [json.loads(line) for line in zf.read("emoexpl.jsonl").decode().splitlines()]
    assert len(records) == N_ITEMS
    assert {r["construals"][0]["explication"]["agency"] for r in records} == {"i"}
