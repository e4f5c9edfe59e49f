"""Browser tests of the admin's set-up pages: import with a preview, users, rounds."""

import re

import pytest
from django.contrib.auth import authenticate
from playwright.sync_api import expect

from annotator.models import Assignment, Item, ParserPrediction, Round
from annotator.roles import user_roles
from annotator.sampling import item_set_from_items
from tests.factories import PRED, login_request

pytestmark = pytest.mark.django_db(transaction=True)

SETTLED = "() => !document.querySelector('.htmx-request')"


def test_an_admin_imports_a_file(page, live_server, login, admin_user, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"text_id": "b1", "emotion": "joy", "text": "I was glad the rain stopped."}\n'
        '{"text_id": "b2", "emotion": "fear", "text": "I was afraid of the storm."}\n'
    )
    login("dana", "dana-pw")
    page.click("nav >> text=Import")
    page.set_input_files("input[name=file]", str(path))
    page.click("button:has-text('Preview')")
    preview = page.locator("#import-preview")
    expect(preview.locator("tr[data-source-id=b2]")).to_contain_text("I was afraid of the storm.")
    expect(preview.locator("#import-counts")).to_contain_text("new2")
    # the Source field was left empty: a JSONL file's items are recorded under its name
    expect(preview.locator("#import-source")).to_contain_text("Source: items")
    assert not Item.objects.exists()  # nothing written before the confirmation
    page.click("#import-confirm button")
    page.wait_for_url(f"{live_server.url}/manage/import/")
    report = page.locator(".messages .import-report")
    expect(report).to_contain_text("2 rows read from items: 2 items created")
    assert Item.objects.filter(source="items").count() == 2
    # a reload is a GET of the import page: no failure, no second import, the summary gone
    page.reload()
    expect(page.locator("#import-problems")).to_have_count(0)
    expect(page.locator(".messages .import-report")).to_have_count(0)
    assert Item.objects.count() == 2

    # the same file again: nothing new, so nothing to confirm
    page.set_input_files("input[name=file]", str(path))
    page.click("button:has-text('Preview')")
    expect(page.locator("#import-nothing-new")).to_contain_text("Nothing new to import")
    expect(page.locator("#import-confirm")).to_have_count(0)

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text_id": "b3", "emotion": "elation", "text": "x"}\n')
    page.set_input_files("input[name=file]", str(bad))
    page.click("button:has-text('Preview')")
    expect(page.locator("#import-problems")).to_contain_text("line 1, column emotion: 'elation'")
    expect(page.locator("#import-confirm")).to_have_count(0)
    assert not Item.objects.filter(source_id="b3").exists()


def test_an_admin_creates_a_user_who_then_logs_in(page, live_server, login, admin_user):
    login("dana", "dana-pw")
    page.click("nav >> text=Users")
    expect(page.locator("form.who span")).to_have_text("dana · admin")  # her roles, not every role
    page.fill("#user-form input[name=username]", "ivan")
    page.check("#user-form input[name=roles][value=annotator]")
    page.click("#user-form button[type=submit]")
    password = page.locator("#new-password").inner_text()
    assert authenticate(login_request(), username="ivan", password=password) is not None
    row = page.locator("tr[data-user=ivan]")
    expect(row.locator("input[value=annotator]")).to_be_checked()

    row.locator("input[value=adjudicator]").check()
    row.locator("button:has-text('Save roles')").click()
    page.wait_for_url(f"{live_server.url}/manage/users/")
    expect(page.locator(".messages")).to_contain_text("ivan: annotator, adjudicator")
    assert user_roles(authenticate(login_request(), username="ivan", password=password)) == {
        "annotator",
        "adjudicator",
    }

    page.locator("tr[data-user=ivan] button:has-text('Deactivate')").click()
    expect(page.locator("tr[data-user=ivan]")).to_contain_text("inactive")
    assert authenticate(login_request(), username="ivan", password=password) is None


def test_an_admin_sets_up_a_prefilled_round_and_is_warned_about_a_contaminated_blind_one(
    page, live_server, login, admin_user, items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    for item in items[:3]:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    login("dana", "dana-pw")
    page.click("nav >> text=Rounds")
    page.click("text=New round")
    # htmx binds the form's change handlers when the page has loaded: a choice made before is lost
    page.wait_for_load_state()
    page.select_option("select[name=item_set]", str(item_set.pk))
    page.wait_for_function(SETTLED)
    parser = page.locator("select[name=prefill_parser]")
    expect(parser.locator("option[value=lex]")).to_have_text("lex (legal predictions for 3 of 4 items)")
    page.fill("input[name=name]", "pilot")
    page.check("input[name=annotators] >> nth=0")
    page.check("input[name=annotators] >> nth=1")
    page.check("input[name=mode][value=prefilled]")
    parser.select_option("lex")
    page.click("#round-submit")
    page.wait_for_url(re.compile(r"/manage/rounds/\d+/$"))
    expect(page.locator(".messages")).to_contain_text("Round pilot created: 8 assignments.")
    expect(page.locator("tr[data-annotator=alice]")).to_contain_text("4")
    assert Round.objects.get(name="pilot").prefill_parser == "lex"

    page.click("text=← Rounds")
    expect(page.locator("tr[data-round=pilot]")).to_contain_text("four")
    page.click("text=New round")
    page.wait_for_load_state()  # htmx's handlers are bound
    page.fill("input[name=name]", "control")
    page.check("input[name=annotators] >> nth=0")
    page.check("input[name=annotators] >> nth=1")
    page.select_option("select[name=item_set]", str(item_set.pk))
    page.wait_for_function(SETTLED)
    expect(page.locator("select[name=prefill_parser] option[value=lex]")).to_have_count(1)
    # what was filled in before the set was chosen survives the form's refresh
    expect(page.locator("input[name=name]")).to_have_value("control")
    expect(page.locator("input[name=annotators] >> nth=1")).to_be_checked()
    page.click("#round-submit")
    warning = page.locator("#overlap-warning")
    expect(warning.locator("tr[data-annotator=alice]")).to_contain_text("4")
    expect(page.locator("#round-form .error")).to_have_count(0)  # said once, in the box
    expect(warning.locator("tr[data-annotator=bob]")).to_contain_text("4")
    assert not Round.objects.filter(name="control").exists()
    warning.locator("input[name=confirm_overlap]").check()
    page.click("#round-submit")
    page.wait_for_url(re.compile(r"/manage/rounds/\d+/$"))
    assert Round.objects.get(name="control").assignments.count() == 8


def test_an_admin_removes_an_annotator_and_their_pending_work_moves(
    page, live_server, login, admin_user, items, annotator, other_annotator, adjudicator
):
    from annotator.services import round_create

    round_ = round_create(
        name="trio",
        item_set=item_set_from_items(name="four", items=items),
        annotators=[annotator, other_annotator],
        annotators_per_item=1,
    )
    login("dana", "dana-pw")
    page.goto(f"{live_server.url}/manage/rounds/{round_.pk}/")
    expect(page.locator("tr[data-annotator=alice]")).to_contain_text("2")
    page.locator("tr[data-annotator=alice] button:has-text('Remove')").click()
    expect(page.locator(".messages")).to_contain_text(
        "alice removed from the pool: 2 pending assignments moved (to bob 2)"
    )
    # no work of hers is left in the round: she is gone from the table and can be added again
    expect(page.locator("tr[data-annotator=alice]")).to_have_count(0)
    expect(page.locator("tr[data-annotator=bob]")).to_contain_text("4")
    expect(page.locator("#pool-add option", has_text="alice")).to_have_count(1)
    assert Assignment.objects.filter(round=round_, annotator=other_annotator).count() == 4


def test_the_round_form_offers_the_parsers_of_the_text_it_will_show(
    page, live_server, login, admin_user, items, annotator, other_annotator
):
    item_set = item_set_from_items(name="four", items=items)
    for item in items:
        ParserPrediction.objects.create(
            item=item, parser="lex-gen", explication=PRED, legal=True, text_field="text"
        )
        ParserPrediction.objects.create(
            item=item, parser="lex-masked", explication=PRED, legal=True, text_field="masked_text"
        )
    login("dana", "dana-pw")
    page.goto(f"{live_server.url}/manage/rounds/new/")
    page.fill("input[name=name]", "masked")
    page.select_option("select[name=item_set]", str(item_set.pk))
    page.wait_for_function(SETTLED)
    parser = page.locator("select[name=prefill_parser]")
    expect(parser.locator("option[value=lex-masked]")).to_have_count(1)
    expect(parser.locator("option[value=lex-gen]")).to_have_count(0)
    expect(page.locator("#field-mismatch li[data-parser=lex-gen]")).to_contain_text("read text")
    # showing the generated text offers the parser that read it, and keeps what was typed
    page.select_option("select[name=text_field]", "text")
    page.wait_for_function(SETTLED)
    expect(parser.locator("option[value=lex-gen]")).to_have_count(1)
    expect(parser.locator("option[value=lex-masked]")).to_have_count(0)
    expect(page.locator("input[name=name]")).to_have_value("masked")
    page.check("input[name=annotators] >> nth=0")
    page.check("input[name=annotators] >> nth=1")
    page.check("input[name=mode][value=prefilled]")
    parser.select_option("lex-gen")
    page.click("#round-submit")
    page.wait_for_url(re.compile(r"/manage/rounds/\d+/$"))
    created = Round.objects.get(name="masked")
    assert (created.text_field, created.prefill_parser) == ("text", "lex-gen")


def test_an_admin_draws_a_set_and_opens_a_new_round_over_it(page, live_server, login, admin_user, items):
    login("dana", "dana-pw")
    page.goto(f"{live_server.url}/manage/item-sets/")
    expect(page.locator(".field-source, p:has(input[name=source])").first).to_contain_text(
        "only items of this source; empty: all"
    )
    page.fill("input[name=name]", "pair")
    page.select_option("select[name=tier]", "P")
    page.fill("input[name=seed]", "5")
    page.fill("input[name=per_stratum]", "1")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{live_server.url}/manage/item-sets/")
    expect(page.locator(".messages .draw-report")).to_contain_text("Drew pair: 4 items (seed 5).")
    expect(page.locator("input[name=name]")).to_have_value("")  # the form is empty again
    row = page.locator("tr[data-item-set=pair]")
    expect(row).to_contain_text("1 per label")
    expect(row).to_contain_text("P: pilot")
    row.locator("text=New round over it").click()
    page.wait_for_url(re.compile(r"/manage/rounds/new/\?item_set=\d+$"))
    expect(page.locator("select[name=item_set] option:checked")).to_have_text("pair")
