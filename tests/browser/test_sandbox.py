import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_sandbox_preview_follows_slot_changes_live(page, live_server, login, annotator):
    login("alice", "alice-pw")
    page.click("text=Sandbox")
    routing = page.locator(".routing")
    expect(routing).to_have_attribute("data-label", "no-emotion")

    page.select_option("select[name=evaluation]", "feel-bad")
    page.select_option("select[name=eval_target]", "self")
    page.select_option("select[name=agency]", "i")
    expect(routing).to_have_attribute("data-label", "guilt")
    expect(page.locator(".lines li[data-slot=agency]")).to_contain_text("I did something")

    # The paper's single-slot counterfactual: others_know alone moves guilt to shame.
    page.select_option("select[name=others_know]", "can-know")
    expect(routing).to_have_attribute("data-label", "shame")
    expect(page.locator(".lines")).to_contain_text("other people can know this")
    assert "others_know=can-know" in page.url  # the state is in the address

    page.fill("#residue", "remembered shame")
    expect(routing).to_contain_text("schema-residue")

    # Reloading the address restores the same state without htmx.
    page.reload()
    expect(page.locator("select[name=others_know]")).to_have_value("can-know")
    expect(routing).to_contain_text("schema-residue")


def test_rule_set_page_shows_the_thirteen_rules(page, live_server, login, adjudicator):
    login("carol", "carol-pw")
    page.click("text=Rule set")
    expect(page.locator("h1")).to_have_text("Rule set v1")
    expect(page.locator("table.rules tbody tr")).to_have_count(14)
    expect(page.locator("#suite .tag")).to_have_text("passed")
