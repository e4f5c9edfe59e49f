"""An adjudicator opens a round's Evaluation page, sees the confusion heatmap, and compares two
passes side by side."""

import pytest
from playwright.sync_api import expect

from tests.adjudication.evaluation_fixture import make_evaluation_round

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_adjudicator_sees_the_heatmap_and_compares_two_passes(
    page, live_server, login, annotator, other_annotator, adjudicator
):
    round_ = make_evaluation_round(annotator, other_annotator, adjudicator)
    login("carol", "carol-pw")
    page.click("nav >> text=Agreement")
    page.click(f"#round-table tr:has-text('{round_.name}') >> text=evaluation")
    expect(page).to_have_url(f"{live_server.url}/adjudicate/rounds/{round_.pk}/evaluation/")

    first = page.locator("#pass-1")
    expect(first).to_have_attribute("data-pass", "annotator:alice")
    expect(first.locator("svg.confusion-heatmap")).to_be_visible()
    expect(first.locator("svg.confusion-heatmap g.cell")).to_have_count(13 * 14)
    expect(first.locator('g.cell[data-row="guilt"][data-column="shame"] text')).to_have_text("1")
    expect(first.locator('.headline-table tr[data-figure="accuracy"] .value')).to_have_text("0.667")

    page.select_option("#evaluation-form select[name=compare]", "gold")
    page.fill("#evaluation-form input[name=orders]", "50")
    page.click("#evaluation-form button[type=submit]")
    expect(page.locator("#compare-table")).to_be_visible()
    expect(page.locator("#pass-2")).to_have_attribute("data-pass", "gold")
    expect(page.locator("svg.confusion-heatmap")).to_have_count(2)
    accuracy = page.locator('#compare-table tr[data-figure="accuracy"]')
    expect(accuracy).to_contain_text("0.667")
    expect(accuracy).to_contain_text("0.833")
    expect(accuracy.locator(".diff")).to_have_text("-0.167")
    ticks = page.locator("#pass-1 svg.sensitivity-strip path.order").get_attribute("d")
    assert ticks.count("M") == 50  # one tick per random order
