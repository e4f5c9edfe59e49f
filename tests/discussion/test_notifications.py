"""Who hears of a comment, in the app: an annotator's question reaches the adjudicators, a reply
the question's author and everyone who replied before, a mention the user named; never anyone who
may not read the comment. The badge counts the unread ones in one query; the notifications page
lists them, opening one marks it read and leads to the item's page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotator.roles import user_roles
from discussion.models import Comment, Notification
from discussion.selectors import unread_count
from discussion.services import comment_edit, comment_post
from tests.discussion.conftest import assignment_of, first_item, submit

pytestmark = pytest.mark.django_db


def told(comment: Comment) -> dict[str, str]:
    return {n.recipient.username: n.kind for n in comment.notifications.select_related("recipient")}


def test_an_annotators_question_reaches_every_adjudicator_and_no_one_else(
    prefilled_round, annotator, other_annotator, adjudicator, other_adjudicator, admin_user
):
    question = comment_post(user=annotator, item=first_item(prefilled_round), body="Which trigger?")
    assert told(question) == {"carol": "question", "dave": "question"}


def test_an_adjudicators_question_tells_no_one_unless_it_mentions_them(
    prefilled_round, annotator, adjudicator, other_adjudicator
):
    note = comment_post(user=adjudicator, item=first_item(prefilled_round), body="A note for the team")
    assert told(note) == {}


def test_a_reply_tells_the_question_s_author_and_those_who_replied_before(
    prefilled_round, annotator, other_annotator, adjudicator, other_adjudicator
):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="Which trigger?")
    first = comment_post(
        user=other_adjudicator, item=item, body="someone-did-something", reply_to=question.pk
    )
    assert told(first) == {"alice": "reply"}
    second = comment_post(user=other_annotator, item=item, body="I agree with dave", reply_to=question.pk)
    assert told(second) == {"alice": "reply", "dave": "reply"}
    # a reply to a reply joins the question's thread, and tells it
    third = comment_post(user=adjudicator, item=item, body="settled", reply_to=second.pk)
    assert third.parent_id == question.pk
    assert told(third) == {"alice": "reply", "dave": "reply", "bob": "reply"}


def test_a_mention_tells_the_user_named_once_and_unknown_names_stay_text(
    prefilled_round, annotator, other_annotator, adjudicator, other_adjudicator
):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="@bob, @nobody and @carol: which trigger?")
    assert question.mentions == ["bob", "carol"]
    # carol is told once: of the question (her notification's kind), bob of the mention
    assert told(question) == {"bob": "mention", "carol": "question", "dave": "question"}
    reply = comment_post(user=adjudicator, item=item, body="@alice see the guidelines.", reply_to=question.pk)
    assert told(reply) == {"alice": "reply"}


def test_a_mention_never_reaches_someone_who_may_not_read_the_comment(
    blind_round, annotator, other_annotator, outsider, adjudicator, other_adjudicator
):
    """In the blind round bob has not submitted: alice's question is not his to read, nor eve's
    (no role); naming them tells them nothing."""
    item = first_item(blind_round)
    question = comment_post(user=annotator, item=item, body="@bob @eve what did you choose?")
    assert question.mentions == ["bob", "eve"]
    assert told(question) == {"carol": "question", "dave": "question"}
    assert not Notification.objects.filter(recipient__in=[other_annotator, outsider]).exists()


def test_a_reply_by_another_annotator_in_a_blind_round_does_not_reach_one_who_has_not_submitted(
    blind_round, annotator, other_annotator, adjudicator
):
    item = first_item(blind_round)
    question = comment_post(user=annotator, item=item, body="Which agency?")
    submit(other_annotator, blind_round, item)
    answer = comment_post(user=other_annotator, item=item, body="I chose i", reply_to=question.pk)
    assert told(answer) == {}  # alice may not read bob's answer before she submits
    staff = comment_post(user=adjudicator, item=item, body="agency=i here", reply_to=question.pk)
    assert told(staff) == {"alice": "reply", "bob": "reply"}


def test_an_edit_that_mentions_someone_new_tells_them(
    prefilled_round, annotator, other_annotator, adjudicator
):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="Which trigger?")
    comment_edit(user=annotator, comment=question, body="Which trigger, @bob?")
    question.refresh_from_db()
    assert question.edited_at is not None and question.mentions == ["bob"]
    assert told(question)["bob"] == "mention"


def test_the_unread_count_is_one_query(
    prefilled_round, annotator, other_annotator, adjudicator, django_assert_num_queries
):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="Which trigger?")
    comment_post(user=adjudicator, item=item, body="this one", reply_to=question.pk)
    for user, expected in ((adjudicator, 1), (annotator, 1), (other_annotator, 0)):
        fresh = User.objects.get(pk=user.pk)
        user_roles(fresh)  # read once per request by the middleware already
        with django_assert_num_queries(1):
            assert unread_count(fresh) == expected


def test_the_badge_fragment_shows_the_unread_count(client, prefilled_round, annotator, adjudicator):
    comment_post(user=annotator, item=first_item(prefilled_round), body="Which trigger?")
    client.force_login(adjudicator)
    badge = client.get("/notifications/badge/", headers={"HX-Request": "true"}).content.decode()
    assert 'data-unread="1"' in badge and ">1<" in badge.replace(" ", "")
    page = client.get("/").content.decode()
    assert 'hx-get="/notifications/badge/" hx-trigger="revealed"' in page and 'href="/notifications/"' in page
    client.force_login(annotator)
    assert 'data-unread="0"' in client.get("/notifications/badge/").content.decode()


def test_the_notifications_page_lists_them_and_opening_one_marks_it_read_and_leads_to_the_item(
    client, submitted, annotator, adjudicator
):
    item = first_item(submitted)
    question = comment_post(user=annotator, item=item, body="Which trigger is it?")
    answer = comment_post(user=adjudicator, item=item, body="someone-did-something", reply_to=question.pk)

    client.force_login(adjudicator)
    page = client.get("/notifications/").content.decode()
    assert "alice asks" in page and "Which trigger is it?" in page
    carol_note = Notification.objects.get(recipient=adjudicator)
    opened = client.post(f"/notifications/{carol_note.pk}/open/")
    # no gold record yet: the conflict page of the item
    assert opened.url == f"/adjudicate/rounds/{submitted.pk}/items/{item.pk}/#comment-{question.pk}"
    carol_note.refresh_from_db()
    assert carol_note.read_at is not None

    client.force_login(annotator)
    assert "carol replied" in client.get("/notifications/").content.decode()
    assert "carol replied" in client.get("/notifications/", {"unread": "1"}).content.decode()
    refused = client.get("/notifications/", {"unread": "yes"})  # was the whole list, as if unread=0
    assert refused.status_code == 400 and "bad query: unread: true or false" in refused.content.decode()
    alice_note = Notification.objects.get(recipient=annotator)
    opened = client.post(f"/notifications/{alice_note.pk}/open/")
    assignment = assignment_of(annotator, submitted, item)
    assert opened.url == f"/work/a/{assignment.pk}/#comment-{answer.pk}"


def test_an_adjudicator_is_led_to_the_gold_record_when_the_item_has_one(gold_round, annotator, adjudicator):
    item = first_item(gold_round)
    comment_post(user=annotator, item=item, body="Why this gold?")
    note = Notification.objects.get(recipient=adjudicator)
    assert client_open(adjudicator, note).startswith(f"/adjudicate/rounds/{gold_round.pk}/gold/{item.pk}/")


def client_open(user, note) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.post(f"/notifications/{note.pk}/open/").url


def test_another_users_notification_is_not_found(
    client, prefilled_round, annotator, adjudicator, other_adjudicator
):
    comment_post(user=annotator, item=first_item(prefilled_round), body="Which trigger?")
    carols = Notification.objects.get(recipient=adjudicator)
    client.force_login(other_adjudicator)
    assert client.post(f"/notifications/{carols.pk}/open/").status_code == 404
    carols.refresh_from_db()
    assert carols.read_at is None


def test_mark_all_read(client, prefilled_round, annotator, adjudicator):
    item = first_item(prefilled_round)
    comment_post(user=annotator, item=item, body="one?")
    comment_post(user=annotator, item=item, body="two?")
    client.force_login(adjudicator)
    assert unread_count(adjudicator) == 2
    answer = client.post("/notifications/read/", follow=True)
    assert "2 notifications marked read." in answer.content.decode()
    assert unread_count(adjudicator) == 0
    assert client.get("/notifications/read/").status_code == 405  # a GET writes nothing
