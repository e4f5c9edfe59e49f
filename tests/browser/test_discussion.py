"""A comment thread reaches the adjudicator and back (issue 27): alice asks on the annotation
page of a blind round, typing keys that are the page's shortcuts elsewhere; carol sees the unread
badge, opens the notification (the item's conflict page), answers; alice reads the answer, and
her own badge tells her first."""

import re

import pytest
from playwright.sync_api import expect

from annotator.models import Annotation, Assignment
from discussion.models import Comment
from tests.browser.accessibility import axe_violations

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"{username}-pw")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_a_question_reaches_the_adjudicator_and_the_answer_comes_back(
    browser, page, live_server, blind_round, annotator, other_annotator, adjudicator
):
    first = Assignment.objects.filter(round=blind_round, annotator=annotator).order_by("position").first()
    item = first.item
    log_in(page, live_server, "alice")
    page.goto(f"{live_server.url}/work/a/{first.pk}/")
    page.wait_for_load_state()
    expect(page.locator("#annotation[data-ready=true]")).to_be_visible()
    box = page.locator("#discussion-thread #comment-body")
    expect(box).to_be_visible()  # htmx loaded the thread after the page
    expect(page.locator("#discussion-blind")).to_be_visible()

    # keys typed in the comment box stay there: 1 (a value), j (next slot), x (skip) do nothing else
    chosen = page.locator("fieldset[data-slot=experiencer] input:checked").get_attribute("value")
    box.click()
    page.keyboard.type("1jx @carol is the trigger someone-did-something here?")
    expect(box).to_have_value("1jx @carol is the trigger someone-did-something here?")
    expect(page).to_have_url(f"{live_server.url}/work/a/{first.pk}/")
    assert page.locator("fieldset[data-slot=experiencer] input:checked").get_attribute("value") == chosen
    # Ctrl+Enter posts the comment, not the annotation
    page.keyboard.press("Control+Enter")
    question = page.locator("#threads .thread .comment").first
    expect(question).to_contain_text("is the trigger someone-did-something here?")
    expect(question.locator(".mention")).to_have_text("@carol")
    expect(page).to_have_url(f"{live_server.url}/work/a/{first.pk}/")
    assert not Annotation.objects.filter(assignment=first).exists()
    assert Assignment.objects.get(pk=first.pk).status == "pending"
    # an empty comment is refused in place, saying why
    page.click("#comment-post")
    expect(page.locator("#comment-error")).to_contain_text("blank")

    # carol, in her own browser, sees the badge and answers from the notification
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    other = context.new_page()
    other.set_default_timeout(10_000)
    log_in(other, live_server, "carol")
    expect(other.locator("#notification-badge")).to_contain_text("1")
    other.click("#nav-notifications")
    other.wait_for_load_state()
    expect(other.locator("#notifications tr.unread")).to_contain_text("alice asks")
    other.click("#notifications tr.unread button")
    other.wait_for_load_state()
    expect(other).to_have_url(
        re.compile(rf"/adjudicate/rounds/{blind_round.pk}/items/{item.pk}/#comment-\d+$")
    )
    thread = other.locator("#discussion-thread")
    expect(thread).to_contain_text("is the trigger someone-did-something here?")
    expect(other.locator("#notification-badge")).not_to_contain_text("1")
    other.click("#discussion-thread details.reply summary")
    other.locator("#discussion-thread details.reply textarea").fill(
        "Yes: a neighbour acts, so someone-did-something."
    )
    other.click("#discussion-thread details.reply button")
    expect(other.locator("#discussion-thread .replies")).to_contain_text("a neighbour acts")
    context.close()
    reply = Comment.objects.get(parent__isnull=False)
    assert reply.author == adjudicator and reply.by_staff

    # alice: her badge says so, and the answer is on her annotation page
    page.goto(f"{live_server.url}/work/a/{first.pk}/")
    page.wait_for_load_state()
    expect(page.locator("#notification-badge")).to_contain_text("1")
    expect(page.locator("#discussion-thread .replies")).to_contain_text("a neighbour acts")
    expect(page.locator("#discussion-thread .replies .comment")).to_contain_text("team")
    # the thread with its comments, mention and forms, and the notifications page, read by all
    page.click("#discussion-thread details.reply summary")
    assert axe_violations(page) == []
    page.goto(f"{live_server.url}/notifications/")
    expect(page.locator("#notifications tr.unread")).to_contain_text("carol replied")
    assert axe_violations(page) == []


def test_ctrl_enter_in_a_reply_on_the_gold_page_posts_the_reply_not_the_gold_record(
    page, live_server, gold_round, annotator, adjudicator
):
    """gold.js saves the record on Ctrl+Enter anywhere on the page: from a comment box it posts
    the comment instead, and the record's form keeps what was typed in it."""
    from adjudication.models import GoldItem
    from discussion.services import comment_post

    gold = GoldItem.objects.filter(round=gold_round).order_by("item_id").first()
    comment_post(user=annotator, item=gold.item, body="Why pride?")
    changes = gold.changes.count()
    log_in(page, live_server, "carol")
    url = f"{live_server.url}/adjudicate/rounds/{gold_round.pk}/gold/{gold.item_id}/"
    page.goto(url)
    page.wait_for_load_state()
    expect(page.locator("#resolve-form[data-ready=true]")).to_be_attached()
    page.fill("input[name=why]", "a reason that would let the record save")
    page.click("#discussion-thread details.reply summary")
    reply = page.locator("#discussion-thread details.reply textarea")
    reply.click()
    page.keyboard.type("ab jk: the writer won")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#discussion-thread .replies")).to_contain_text("ab jk: the writer won")
    expect(page).to_have_url(url)
    expect(page.locator("input[name=why]")).to_have_value("a reason that would let the record save")
    assert gold.changes.count() == changes  # no save of the record


def test_without_javascript_the_thread_has_its_own_page_and_comes_back(
    browser, live_server, prefilled_round, annotator
):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, live_server, "alice")
    first = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position").first()
    page.goto(f"{live_server.url}/work/a/{first.pk}/")
    page.click("#discussion a")
    page.wait_for_load_state()
    page.fill("#comment-body", "Without scripts: which trigger?")
    page.click("#comment-post")
    page.wait_for_load_state()
    comment = Comment.objects.get()
    expect(page).to_have_url(f"{live_server.url}/work/a/{first.pk}/#comment-{comment.pk}")
    expect(page.locator(".messages")).to_contain_text("Comment posted.")
    context.close()
