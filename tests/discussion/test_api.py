"""The discussion's API: an item's comments (list, a question, a reply), one comment (read, its
author edits it), the user's notifications (list, unread only, mark one or all read)."""

from __future__ import annotations

import pytest

from discussion.models import Comment, Notification
from discussion.services import comment_post
from tests.discussion.conftest import first_item

pytestmark = pytest.mark.django_db

JSON = "application/json"


@pytest.fixture
def item(prefilled_round):
    return first_item(prefilled_round)


def test_an_annotator_asks_and_an_adjudicator_answers(client, prefilled_round, item, annotator, adjudicator):
    client.force_login(annotator)
    url = f"/api/items/{item.pk}/comments/"
    asked = client.post(url, {"body": "Which trigger, @carol?"}, content_type=JSON)
    assert asked.status_code == 201
    question = asked.json()
    assert question | {"id": 0, "created_at": ""} == {
        "id": 0, "item": item.pk, "round": prefilled_round.pk, "round_name": "prefilled", "author": "alice",
        "by_staff": False, "reply_to": None, "body": "Which trigger, @carol?", "mentions": ["carol"],
        "created_at": "", "edited_at": None,
    }  # fmt: skip
    client.force_login(adjudicator)
    answered = client.post(
        url, {"body": "someone-did-something", "reply_to": question["id"]}, content_type=JSON
    )
    assert answered.status_code == 201
    assert answered.json()["reply_to"] == question["id"] and answered.json()["by_staff"] is True
    listed = client.get(url).json()
    assert [c["body"] for c in listed] == ["Which trigger, @carol?", "someone-did-something"]
    assert client.get(url, {"round": prefilled_round.pk}).json() == listed
    assert client.get(url, {"round": prefilled_round.pk + 100}).json() == []


def test_query_parameters_are_checked(client, item, annotator):
    client.force_login(annotator)
    url = f"/api/items/{item.pk}/comments/"
    for bad in ("abc", "", "0", "-1", "1.0"):
        answer = client.get(url, {"round": bad})
        assert answer.status_code == 400 and "round" in answer.json(), bad
    assert client.get("/api/notifications/", {"unread": "yes"}).status_code == 400


def test_a_body_is_strictly_typed_and_unknown_fields_are_named(client, item, annotator):
    client.force_login(annotator)
    url = f"/api/items/{item.pk}/comments/"
    assert "body" in client.post(url, {"body": 12}, content_type=JSON).json()
    assert "body" in client.post(url, {}, content_type=JSON).json()
    assert client.post(url, {"body": "x", "colour": "red"}, content_type=JSON).json() == {
        "colour": ["unknown field"]
    }
    assert "reply_to" in client.post(url, {"body": "x", "reply_to": "3"}, content_type=JSON).json()
    assert client.post(url, ["body"], content_type=JSON).status_code == 400
    assert not Comment.objects.exists()


def test_the_author_edits_a_comment_and_no_one_else(client, item, annotator, other_annotator):
    question = comment_post(user=annotator, item=item, body="first text")
    client.force_login(other_annotator)
    url = f"/api/comments/{question.pk}/"
    assert client.get(url).json()["body"] == "first text"
    refused = client.patch(url, {"body": "bob's text"}, content_type=JSON)
    assert refused.status_code == 403 and "author" in refused.json()["detail"]
    client.force_login(annotator)
    changed = client.patch(url, {"body": "second text"}, content_type=JSON)
    assert changed.status_code == 200 and changed.json()["edited_at"]
    assert Comment.objects.get().body == "second text"
    assert client.patch(url, {"body": " "}, content_type=JSON).status_code == 400
    assert Comment.objects.get().body == "second text"


def test_a_comment_one_may_not_read_is_not_found(client, blind_round, annotator, other_annotator):
    question = comment_post(user=annotator, item=first_item(blind_round), body="alice's question")
    client.force_login(other_annotator)  # blind, not submitted
    assert client.get(f"/api/comments/{question.pk}/").status_code == 404
    assert client.patch(f"/api/comments/{question.pk}/", {"body": "x"}, content_type=JSON).status_code == 404
    assert client.get(f"/api/comments/{2**63}/").status_code == 404


def test_notifications_are_listed_and_marked_read(
    client, submitted, annotator, adjudicator, other_adjudicator
):
    item = first_item(submitted)
    first = comment_post(user=annotator, item=item, body="first?")
    comment_post(user=annotator, item=item, body="second?")
    client.force_login(adjudicator)
    listed = client.get("/api/notifications/").json()
    assert [n["comment"]["body"] for n in listed] == ["second?", "first?"]  # newest first
    assert {n["kind"] for n in listed} == {"question"}
    assert listed[1]["url"] == f"/adjudicate/rounds/{submitted.pk}/items/{item.pk}/#comment-{first.pk}"
    read = client.post(f"/api/notifications/{listed[1]['id']}/read/")
    assert read.status_code == 200 and read.json()["read_at"]
    assert [n["comment"]["body"] for n in client.get("/api/notifications/", {"unread": "true"}).json()] == [
        "second?"
    ]
    assert len(client.get("/api/notifications/", {"unread": "false"}).json()) == 2
    assert client.post("/api/notifications/read/").json() == {"marked": 1}
    assert client.post("/api/notifications/read/").json() == {"marked": 0}
    assert not Notification.objects.filter(recipient=adjudicator, read_at__isnull=True).exists()
    # dave's are his own: carol's marks left them unread, and carol cannot mark them
    daves = Notification.objects.filter(recipient=other_adjudicator)
    assert daves.count() == 2 and not daves.filter(read_at__isnull=False).exists()
    assert client.post(f"/api/notifications/{daves.first().pk}/read/").status_code == 404
    assert client.post(f"/api/notifications/{2**63}/read/").status_code == 404


def test_the_schema_states_the_body_rule():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    body = schema["components"]["schemas"]["CommentIn"]["properties"]["body"]
    assert body["maxLength"] == 5000 and body["minLength"] == 1
    import re

    pattern = re.compile(body["pattern"])
    assert pattern.search("a question\nover two lines")
    assert not pattern.search("  \n ") and not pattern.search("bell\x07") and not pattern.search("tab\there")
    assert schema["components"]["schemas"]["CommentIn"]["additionalProperties"] is False
