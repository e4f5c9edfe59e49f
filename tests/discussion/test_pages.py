"""The thread on the three pages (annotation, conflict, gold): each includes it, htmx loads it
after the page, and without JavaScript a link opens it on a page of its own. Posting works through
htmx (the answer is the new thread) and as a plain form (back to a safe ``next``)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from discussion.models import Comment
from discussion.services import comment_post
from tests.discussion.conftest import assignment_of, first_item, post_url, thread_url

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


class Ancestry(HTMLParser):
    """The ids of the elements around each element with an id."""

    VOID = {"input", "br", "img", "meta", "link", "hr", "col", "source", "wbr", "area", "base", "embed"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str]] = []
        self.around: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        found = dict(attrs).get("id") or ""
        if found:
            self.around[found] = [i for _, i in self.stack if i]
        if tag not in self.VOID:
            self.stack.append((tag, found))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


def around(html: str) -> dict[str, list[str]]:
    parser = Ancestry()
    parser.feed(html)
    return parser.around


def test_the_annotation_page_loads_the_thread_outside_the_annotation_form(client, prefilled_round, annotator):
    item = first_item(prefilled_round)
    assignment = assignment_of(annotator, prefilled_round, item)
    client.force_login(annotator)
    html = client.get(f"/work/a/{assignment.pk}/").content.decode()
    assert f'hx-get="{thread_url(item, prefilled_round)}" hx-trigger="load"' in html
    assert f'href="{thread_url(item, prefilled_round)}?next=/work/a/{assignment.pk}/"' in html
    ids = around(html)
    assert "annotation" not in ids["discussion"] and "discussion" in ids
    assert "/static/js/discussion.js" in html
    # the fragment's forms are forms of their own
    comment_post(user=annotator, item=item, body="Which trigger?")
    fragment = client.get(thread_url(item, prefilled_round), headers=HTMX).content.decode()
    assert "<html" not in fragment and "Which trigger?" in fragment
    assert fragment.count("<form") == fragment.count("</form>") == 3  # the new question, a reply, an edit
    assert around(fragment)["comment-body"] == ["discussion-thread", "comment-form"]


@pytest.mark.parametrize("page", ["conflict", "gold"])
def test_the_conflict_and_gold_pages_load_the_thread(client, gold_round, annotator, adjudicator, page):
    item = first_item(gold_round)
    comment_post(user=annotator, item=item, body="Is this pride?")
    client.force_login(adjudicator)
    url = {
        "conflict": f"/adjudicate/rounds/{gold_round.pk}/items/{item.pk}/",
        "gold": f"/adjudicate/rounds/{gold_round.pk}/gold/{item.pk}/",
    }[page]
    html = client.get(url).content.decode()
    assert f'hx-get="{thread_url(item, gold_round)}"' in html
    assert "resolve-form" not in around(html)["discussion"]
    fragment = client.get(thread_url(item, gold_round), headers=HTMX).content.decode()
    assert "Is this pride?" in fragment and "Reply" in fragment and "New comment" in fragment


def test_an_htmx_post_answers_with_the_new_thread(client, submitted, annotator, adjudicator):
    item = first_item(submitted)
    question = comment_post(user=annotator, item=item, body="Which trigger?")
    client.force_login(adjudicator)
    answer = client.post(
        post_url(item, submitted),
        {"body": "someone-did-something, @alice", "reply_to": question.pk},
        headers=HTMX,
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    assert html.startswith('<div class="discussion" id="discussion-thread"')
    reply = Comment.objects.get(parent=question)
    assert f'id="comment-{reply.pk}"' in html
    assert '<strong class="mention">@alice</strong>' in html
    assert reply.by_staff and reply.author == adjudicator


def test_a_plain_post_goes_back_to_next_at_the_comment(client, prefilled_round, annotator):
    item = first_item(prefilled_round)
    assignment = assignment_of(annotator, prefilled_round, item)
    client.force_login(annotator)
    back = f"/work/a/{assignment.pk}/"
    answer = client.post(post_url(item, prefilled_round), {"body": "Which trigger?", "next": back})
    made = Comment.objects.get()
    assert answer.status_code == 302 and answer.url == f"{back}#comment-{made.pk}"


@pytest.mark.parametrize(
    "unsafe", ["https://evil.example/", "//evil.example/x", "javascript:alert(1)", "/\\evil"]
)
def test_a_next_off_the_site_is_ignored(client, prefilled_round, annotator, unsafe):
    item = first_item(prefilled_round)
    client.force_login(annotator)
    answer = client.post(post_url(item, prefilled_round), {"body": "Which trigger?", "next": unsafe})
    assignment = assignment_of(annotator, prefilled_round, item)
    assert answer.url == f"/work/a/{assignment.pk}/#comment-{Comment.objects.get().pk}"


def test_the_thread_page_without_javascript(client, prefilled_round, annotator, adjudicator):
    item = first_item(prefilled_round)
    comment_post(user=annotator, item=item, body="Which trigger?")
    client.force_login(adjudicator)
    html = client.get(thread_url(item, prefilled_round), {"next": "/adjudicate/"}).content.decode()
    assert "<html" in html and "Which trigger?" in html and item.masked_text in html
    assert (
        'id="discussion-back" href="/adjudicate/"' in html
        or 'href="/adjudicate/" id="discussion-back"' in html
    )
    assert 'name="next" value="/adjudicate/"' in html
    # without next: back to the item's page for this reader (its conflict page: no gold yet)
    html = client.get(thread_url(item, prefilled_round)).content.decode()
    assert f'href="/adjudicate/rounds/{prefilled_round.pk}/items/{item.pk}/"' in html


def test_a_refused_plain_post_shows_the_page_with_the_text_kept(client, prefilled_round, annotator):
    item = first_item(prefilled_round)
    client.force_login(annotator)
    answer = client.post(post_url(item, prefilled_round), {"body": "ring\x07"})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert "<html" in html and "U+0007" in html and "ring\x07</textarea>" in html


def test_a_refused_reply_opens_its_form_with_the_problem(client, prefilled_round, annotator, adjudicator):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="Which trigger?")
    client.force_login(adjudicator)
    html = client.post(
        post_url(item, prefilled_round), {"body": " ", "reply_to": question.pk}, headers=HTMX
    ).content.decode()
    reply_form = html[html.index(f'id="thread-{question.pk}"') :]
    assert '<details class="reply" open>' in reply_form and "the comment is blank" in reply_form
    assert 'id="comment-error"' not in html  # the new-question form is left alone


def test_the_author_edits_on_the_page(client, prefilled_round, annotator, other_annotator):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="draft")
    edit = f"{thread_url(item, prefilled_round)}comments/{question.pk}/edit/"
    client.force_login(other_annotator)
    assert 'class="edit"' not in client.get(thread_url(item, prefilled_round), headers=HTMX).content.decode()
    assert client.post(edit, {"body": "bob's"}).status_code == 404
    client.force_login(annotator)
    answer = client.post(edit, {"body": "final"}, headers=HTMX)
    assert (
        answer.status_code == 200
        and "final" in answer.content.decode()
        and "edited" in answer.content.decode()
    )
    refused = client.post(edit, {"body": ""}, headers=HTMX)
    assert refused.status_code == 400 and '<details class="edit" open>' in refused.content.decode()
    assert Comment.objects.get().body == "final"


def test_posting_is_a_post(client, prefilled_round, annotator):
    item = first_item(prefilled_round)
    client.force_login(annotator)
    assert client.get(post_url(item, prefilled_round)).status_code == 405
    assert client.post(thread_url(item, prefilled_round), {"body": "x"}).status_code == 405
