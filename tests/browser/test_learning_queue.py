"""An admin turns a round's learning queue on, mixed, from the round's page; the annotator's next
item is then the queue's first, and the one after it the queue's next."""

import json

import pytest
from playwright.sync_api import expect

from annotator.models import Assignment, ParserPrediction
from learning.models import QueueEntry
from tests.factories import PRED
from tests.learning.conftest import DOUBT, posteriors

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_mixed_round_serves_its_items_in_the_queues_order(
    page, live_server, login, prefilled_round, admin_user, annotator
):
    items = list(prefilled_round.item_set.items.order_by("id"))
    for item, doubt in zip(items, DOUBT, strict=True):
        ParserPrediction.objects.create(
            item=item,
            parser="clf",
            parser_version="1",
            explication=PRED,
            legal=True,
            raw_output=json.dumps({"posteriors": posteriors(doubt)}),
            text_field=prefilled_round.text_field,
        )
    login(admin_user.username, f"{admin_user.username}-pw")
    page.goto(f"{live_server.url}/manage/rounds/{prefilled_round.pk}/")
    page.click("#round-queue-link")
    page.wait_for_load_state()
    expect(page.locator("#queue-none")).to_be_visible()
    page.select_option("select[name=order]", "mixed")
    page.fill("input[name=random_share]", "0.25")
    page.fill("input[name=seed]", "4")
    page.select_option("select[name=parser]", "clf")
    page.click("#queue-form button[type=submit]")
    page.wait_for_load_state()
    expect(page.locator("#queue-state")).to_have_attribute("data-order", "mixed")
    rows = page.locator("#queue-entries tbody tr")
    expect(rows).to_have_count(4)
    expect(page.locator("#queue-entries tr.random")).to_have_count(1)
    expect(page.locator("#random-share-links a").first).to_be_visible()

    ranks = dict(QueueEntry.objects.filter(policy__round=prefilled_round).values_list("item_id", "rank"))
    mine = sorted(
        Assignment.objects.filter(round=prefilled_round, annotator=annotator), key=lambda a: ranks[a.item_id]
    )
    page.click("button:has-text('Log out')")
    login("alice", "alice-pw")
    page.goto(f"{live_server.url}/work/")
    page.click("tr[data-round='prefilled'] a.button")
    expect(page).to_have_url(f"{live_server.url}/work/a/{mine[0].pk}/")
    page.click("#next-item")
    expect(page).to_have_url(f"{live_server.url}/work/a/{mine[1].pk}/")
