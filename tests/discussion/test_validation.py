"""What a comment may be, the same on the page, the API and in the service: not blank, at most
5,000 characters, no control character but a line break; an unknown item is a 404, an unknown
comment replied to or a round that is not the item's a 400 naming it; nothing is written."""

from __future__ import annotations

import pytest

from discussion.models import BODY_MAX, Comment
from discussion.services import CommentError, comment_post
from tests.discussion.conftest import first_item, post_url

pytestmark = pytest.mark.django_db

BAD = [
    ("", "blank"),
    ("   \n  ", "blank"),
    ("x" * (BODY_MAX + 1), "at most 5000 characters"),
    ("ring \x07 the bell", "U+0007"),
    ("a\ttab", "U+0009"),
    ("nul \x00", "U+0000"),
    ("c1 \x85", "U+0085"),
]


@pytest.mark.parametrize("body, says", BAD)
def test_the_service_refuses_a_bad_body_and_names_it(prefilled_round, annotator, body, says):
    with pytest.raises(CommentError) as refused:
        comment_post(user=annotator, item=first_item(prefilled_round), body=body)
    assert says in refused.value.problems["body"]
    assert not Comment.objects.exists()


@pytest.mark.parametrize("body, says", [b for b in BAD if "\x00" not in b[0]])
def test_the_api_refuses_a_bad_body_with_a_400_naming_it(client, prefilled_round, annotator, body, says):
    client.force_login(annotator)
    item = first_item(prefilled_round)
    answer = client.post(f"/api/items/{item.pk}/comments/", {"body": body}, content_type="application/json")
    assert answer.status_code == 400
    assert "body" in answer.json()
    assert not Comment.objects.exists()


def test_the_api_refuses_a_nul_character(client, prefilled_round, annotator):
    client.force_login(annotator)
    item = first_item(prefilled_round)
    answer = client.post(
        f"/api/items/{item.pk}/comments/", {"body": "a\x00b"}, content_type="application/json"
    )
    assert answer.status_code == 400 and "body" in answer.json()


@pytest.mark.parametrize("body, says", BAD[:5])
def test_the_page_refuses_a_bad_body_with_a_400_saying_why(client, prefilled_round, annotator, body, says):
    client.force_login(annotator)
    item = first_item(prefilled_round)
    answer = client.post(post_url(item, prefilled_round), {"body": body}, headers={"HX-Request": "true"})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert 'id="comment-error"' in html and says in html
    assert not Comment.objects.exists()


def test_exactly_5000_characters_and_a_line_break_are_taken(prefilled_round, annotator):
    item = first_item(prefilled_round)
    long = comment_post(user=annotator, item=item, body="y" * BODY_MAX)
    lines = comment_post(user=annotator, item=item, body="  first line\nsecond line  ")
    assert len(long.body) == BODY_MAX
    assert lines.body == "first line\nsecond line"  # trimmed, the line break kept


def test_the_page_reads_a_browsers_line_ends(client, prefilled_round, annotator):
    client.force_login(annotator)
    item = first_item(prefilled_round)
    client.post(post_url(item, prefilled_round), {"body": "one\r\ntwo"})
    assert Comment.objects.get().body == "one\ntwo"


def test_an_unknown_item_is_a_404(client, prefilled_round, annotator):
    client.force_login(annotator)
    assert client.get("/api/items/999999/comments/").status_code == 404
    assert client.get(f"/api/items/{2**63}/comments/").status_code == 404
    posted = client.post("/api/items/999999/comments/", {"body": "hi"}, content_type="application/json")
    assert posted.status_code == 404 and "999999" in posted.json()["detail"]
    assert client.get(f"/discussion/items/999999/rounds/{prefilled_round.pk}/").status_code == 404
    assert (
        client.post(
            f"/discussion/items/999999/rounds/{prefilled_round.pk}/comments/", {"body": "x"}
        ).status_code
        == 404
    )


def test_an_unknown_comment_replied_to_is_a_400_naming_reply_to(client, prefilled_round, annotator):
    client.force_login(annotator)
    item = first_item(prefilled_round)
    answer = client.post(
        f"/api/items/{item.pk}/comments/", {"body": "hi", "reply_to": 424242}, content_type="application/json"
    )
    assert answer.status_code == 400
    assert "424242" in answer.json()["reply_to"][0]
    page = client.post(post_url(item, prefilled_round), {"body": "hi", "reply_to": "424242"})
    assert page.status_code == 400 and "424242" in page.content.decode()
    assert not Comment.objects.exists()


def test_a_reply_to_a_comment_on_another_item_is_refused(prefilled_round, annotator):
    items = list(prefilled_round.item_set.items.order_by("pk"))
    elsewhere = comment_post(user=annotator, item=items[1], body="on the second item")
    with pytest.raises(CommentError) as refused:
        comment_post(user=annotator, item=items[0], body="reply", reply_to=elsewhere.pk)
    assert set(refused.value.problems) == {"reply_to"}
    assert Comment.objects.count() == 1


def test_a_round_that_is_not_the_items_or_not_yours_is_refused(
    client, prefilled_round, annotator, stranger, adjudicator
):
    from annotator.sampling import item_set_from_items
    from annotator.services import round_create
    from tests.factories import make_items

    others = make_items(n_copies=2)[4:]  # t?-1: items of another round alone
    elsewhere = round_create(
        name="elsewhere", item_set=item_set_from_items(name="set-e", items=others), annotators=[stranger],
        mode="blind", annotators_per_item=1,
    )  # fmt: skip
    item = first_item(prefilled_round)
    with pytest.raises(CommentError) as refused:
        comment_post(user=adjudicator, item=item, body="hi", round_id=elsewhere.pk)
    assert "not in round" in refused.value.problems["round"]
    with pytest.raises(CommentError) as refused:
        comment_post(user=annotator, item=item, body="hi", round_id=elsewhere.pk)
    assert "not yours" in refused.value.problems["round"]
    client.force_login(annotator)
    answer = client.post(
        f"/api/items/{item.pk}/comments/",
        {"body": "hi", "round": elsewhere.pk},
        content_type="application/json",
    )
    assert answer.status_code == 400 and "round" in answer.json()
    assert not Comment.objects.exists()


def test_a_reply_takes_its_questions_round_and_refuses_another(prefilled_round, blind_round, annotator):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="q", round_id=prefilled_round.pk)
    reply = comment_post(user=annotator, item=item, body="r", reply_to=question.pk)
    assert reply.round_id == prefilled_round.pk
    with pytest.raises(CommentError) as refused:
        comment_post(user=annotator, item=item, body="r2", reply_to=question.pk, round_id=blind_round.pk)
    assert "round" in refused.value.problems


def test_the_database_refuses_a_blank_or_long_body(prefilled_round, annotator):
    from django.db import IntegrityError, transaction

    item = first_item(prefilled_round)
    for body in ("", "z" * (BODY_MAX + 1)):
        with pytest.raises(IntegrityError), transaction.atomic():
            Comment.objects.create(item=item, round=prefilled_round, author=annotator, body=body)
