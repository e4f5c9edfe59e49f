"""An adjudicator reads a round's Evaluation page (the confusion heatmap, gold compared with the
parser's pass), goes from there to revise the rule set: a swap of guilt and shame fails the
regression suite and cannot be activated; moving no-emotion first passes, shows the gold items
whose label changes, is activated by two adjudicators' votes, and is rolled back from the history."""

import pytest
from playwright.sync_api import expect

from adjudication.models import GoldConstrual
from annotator.models import ParserPrediction
from tests.explications import PRED
from tests.rules.data import NEUTRAL_SURPRISE, gold_items

pytestmark = pytest.mark.django_db(transaction=True)

IDS = ["t1-0", "t2-0", "t3-0", "t4-0"]


def labels():
    return sorted(GoldConstrual.objects.values_list("gold__item__source_id", "label", "rule_set_version"))


def propose(page, places: dict[str, str], note: str) -> None:
    page.click("#propose-revision")
    for emotion, place in places.items():
        page.fill(f"#edit-form input.order[data-emotion={emotion}]", place)
    page.fill("#edit-form textarea[name=note]", note)
    page.click("#propose-edit")


def dave_approves(browser, live_server, version: str) -> None:
    """The second adjudicator votes in his own browser; his vote reaches the quorum (2)."""
    context = browser.new_context()
    other = context.new_page()
    other.set_default_timeout(10_000)
    other.goto(f"{live_server.url}/accounts/login/")
    other.fill("input[name=username]", "dave")
    other.fill("input[name=password]", "dave-pw")
    other.click("button[type=submit]")
    other.goto(f"{live_server.url}/rules/versions/{version}/")
    other.check("#vote-form input[name=approve][value=yes]")
    other.click("#vote-form button[type=submit]")
    expect(other.locator("#version-status")).to_have_text("active")
    context.close()


def test_an_adjudicator_proposes_sees_the_suite_and_gold_changes_activates_and_rolls_back(
    browser, page, live_server, login, items, adjudicator, other_adjudicator, admin_user
):
    round_ = gold_items(items, [NEUTRAL_SURPRISE, PRED, NEUTRAL_SURPRISE, PRED])
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    login("carol", "carol-pw")

    # the Evaluation page: gold's confusion heatmap, then gold beside the parser's pass
    page.goto(f"{live_server.url}/adjudicate/rounds/{round_.pk}/evaluation/?pass=gold")
    expect(page.locator("#pass-1 svg.confusion-heatmap")).to_be_visible()
    page.select_option("#evaluation-form select[name=compare]", "parser:lex")
    page.fill("#evaluation-form input[name=orders]", "20")
    page.click("#evaluation-form button[type=submit]")
    expect(page.locator("#compare-table")).to_be_visible()
    expect(page.locator("#pass-2")).to_have_attribute("data-pass", "parser:lex")
    expect(page.locator("svg.confusion-heatmap")).to_have_count(2)
    page.click("#evaluation-propose")
    expect(page.locator("h1")).to_have_text("Rule set v1")

    # guilt before shame: the canonical self-checks fail, and the page says why it cannot be activated
    propose(page, {"shame": "7", "guilt": "6"}, "guilt before shame")
    expect(page.locator("#suite-verdict")).to_contain_text("failed")
    expect(page.locator("#suite")).to_contain_text("shame prototype routes to guilt")
    expect(page.locator("#activate-blocked")).to_contain_text(
        "fails the regression suite: canonical self-checks"
    )
    expect(page.locator("#vote-form input[name=approve][value=yes]")).to_be_disabled()

    # no-emotion first: passes, and two gold items change label
    page.goto(f"{live_server.url}/rules/")
    propose(page, {"no-emotion": "0"}, "neutral evaluations first")
    expect(page.locator("h1")).to_have_text("Rule set v3")
    expect(page.locator("#suite-verdict")).to_contain_text("passed")
    expect(page.locator("#pilot-row")).to_contain_text("2 change label")
    expect(page.locator("#gold-changes tbody tr")).to_have_count(2)
    expect(page.locator("#gold-changes tr[data-item='t1-0']")).to_contain_text("surprise")
    expect(page.locator("#gold-changes tr[data-item='t1-0']")).to_contain_text("no-emotion")
    expect(page.locator("#gold-accuracy")).to_contain_text("(0/4)")
    page.check("#vote-form input[name=approve][value=yes]")
    page.click("#vote-form button[type=submit]")
    expect(page.locator("#votes")).to_contain_text("carol: approve")
    expect(page.locator("#version-status")).to_have_text("proposed")

    # dave's vote reaches the quorum: v3 is active and gold is routed again under it
    dave_approves(browser, live_server, "3")
    assert labels() == [(t, label, "3") for t, label in zip(IDS, ["no-emotion", "pride"] * 2, strict=True)]
    page.goto(f"{live_server.url}/rules/")
    expect(page.locator("h1")).to_have_text("Rule set v3")
    expect(page.locator("#history")).to_contain_text("vote")

    # rolled back: carol puts v1 to the vote again from the history page, and both approve
    page.click("#versions .activate-again[data-version='1']")
    expect(page.locator("#version-status")).to_have_text("proposed")
    page.check("#vote-form input[name=approve][value=yes]")
    page.click("#vote-form button[type=submit]")
    dave_approves(browser, live_server, "1")
    assert labels() == [(t, label, "1") for t, label in zip(IDS, ["surprise", "pride"] * 2, strict=True)]
    page.goto(f"{live_server.url}/rules/")
    expect(page.locator("h1")).to_have_text("Rule set v1")
