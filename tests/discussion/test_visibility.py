"""Who reads which comment: adjudicators and admins every one; an annotator those of the rounds
where the item is theirs; in a blind round, until they submit the item, only their own and the
replies adjudicators and admins wrote to them. Checked both ways, through the selectors, the page
fragment and the API."""

from __future__ import annotations

import pytest

from discussion.selectors import reader_of, threads, visible_comments
from discussion.services import comment_post
from tests.discussion.conftest import first_item, submit, thread_url

pytestmark = pytest.mark.django_db


def texts(user, item) -> set[str]:
    reader = reader_of(user, item)
    return set() if reader is None else set(visible_comments(reader, item).values_list("body", flat=True))


@pytest.fixture
def blind_thread(blind_round, annotator, other_annotator, adjudicator):
    """In the blind round, on its first item: alice asks; bob, who has submitted the item, answers
    her and asks his own question; carol replies to both and starts a thread of her own."""
    item = first_item(blind_round)
    alice_q = comment_post(user=annotator, item=item, body="Is 'won' an event I did?")
    submit(other_annotator, blind_round, item)
    comment_post(user=other_annotator, item=item, body="I chose agency=i", reply_to=alice_q.pk)
    bob_q = comment_post(user=other_annotator, item=item, body="Bob asks about trigger")
    comment_post(user=adjudicator, item=item, body="Carol answers alice", reply_to=alice_q.pk)
    comment_post(user=adjudicator, item=item, body="Carol answers bob", reply_to=bob_q.pk)
    comment_post(user=adjudicator, item=item, body="Carol's own note")
    return item


def test_in_a_blind_round_an_annotator_reads_only_their_own_and_the_teams_replies_before_submitting(
    blind_round, blind_thread, annotator, other_annotator
):
    assert texts(annotator, blind_thread) == {"Is 'won' an event I did?", "Carol answers alice"}


def test_two_annotators_who_have_not_submitted_each_read_only_their_side(
    blind_round, annotator, other_annotator, adjudicator
):
    item = first_item(blind_round)
    alice_q = comment_post(user=annotator, item=item, body="alice asks")
    bob_q = comment_post(user=other_annotator, item=item, body="bob asks")
    comment_post(user=adjudicator, item=item, body="to alice", reply_to=alice_q.pk)
    comment_post(user=adjudicator, item=item, body="to bob", reply_to=bob_q.pk)
    assert texts(annotator, item) == {"alice asks", "to alice"}
    assert texts(other_annotator, item) == {"bob asks", "to bob"}


def test_after_submitting_the_annotator_reads_the_whole_thread(
    blind_round, blind_thread, annotator, other_annotator
):
    submit(annotator, blind_round, blind_thread)
    everything = {
        "Is 'won' an event I did?",
        "I chose agency=i",
        "Bob asks about trigger",
        "Carol answers alice",
        "Carol answers bob",
        "Carol's own note",
    }
    assert texts(annotator, blind_thread) == everything
    assert texts(other_annotator, blind_thread) == everything  # he submitted before answering


def test_the_threads_hang_replies_under_their_question(blind_round, blind_thread, annotator):
    reader = reader_of(annotator, blind_thread)
    [only] = threads(reader, blind_thread)
    assert only.root.body == "Is 'won' an event I did?"
    assert [r.body for r in only.replies] == ["Carol answers alice"]


def test_adjudicators_and_admins_read_every_comment(blind_thread, adjudicator, other_adjudicator, admin_user):
    for user in (adjudicator, other_adjudicator, admin_user):
        assert len(texts(user, blind_thread)) == 6


def test_in_a_prefilled_round_annotators_read_the_round_s_thread_at_once(
    prefilled_round, annotator, other_annotator
):
    item = first_item(prefilled_round)
    comment_post(user=other_annotator, item=item, body="bob's question")
    assert texts(annotator, item) == {"bob's question"}


def test_an_annotator_reads_only_the_rounds_where_the_item_is_theirs(
    prefilled_round, blind_round, annotator, other_annotator, adjudicator
):
    """Both rounds hold the item; a comment of the blind round stays out of the prefilled round's
    openness."""
    item = first_item(prefilled_round)
    comment_post(user=other_annotator, item=item, body="in prefilled", round_id=prefilled_round.pk)
    comment_post(user=other_annotator, item=item, body="in blind", round_id=blind_round.pk)
    assert texts(annotator, item) == {"in prefilled"}
    assert texts(adjudicator, item) == {"in prefilled", "in blind"}


def test_an_outsider_or_an_annotator_without_the_item_reads_nothing(blind_thread, outsider, stranger):
    assert reader_of(outsider, blind_thread) is None
    assert reader_of(stranger, blind_thread) is None


def test_the_page_fragment_keeps_the_blind_rule(client, blind_round, blind_thread, annotator):
    client.force_login(annotator)
    html = client.get(thread_url(blind_thread, blind_round), headers={"HX-Request": "true"}).content.decode()
    assert "Carol answers alice" in html and "Is &#x27;won&#x27; an event I did?" in html
    assert "I chose agency=i" not in html and "Bob asks" not in html and "Carol&#x27;s own note" not in html
    assert 'id="discussion-blind"' in html  # the page says why
    submit(annotator, blind_round, blind_thread)
    html = client.get(thread_url(blind_thread, blind_round), headers={"HX-Request": "true"}).content.decode()
    assert "I chose agency=i" in html and "Bob asks" in html and 'id="discussion-blind"' not in html


def test_the_api_keeps_the_blind_rule(client, blind_round, blind_thread, annotator):
    client.force_login(annotator)
    url = f"/api/items/{blind_thread.pk}/comments/"
    before = {c["body"] for c in client.get(url).json()}
    assert before == {"Is 'won' an event I did?", "Carol answers alice"}
    submit(annotator, blind_round, blind_thread)
    assert len(client.get(url).json()) == 6


def test_no_role_no_discussion(client, blind_round, blind_thread, outsider):
    client.force_login(outsider)
    assert client.get(thread_url(blind_thread, blind_round)).status_code == 403
    assert client.get(f"/api/items/{blind_thread.pk}/comments/").status_code == 403
    assert client.get("/notifications/").status_code == 403


def test_an_annotator_without_the_item_gets_404_as_for_no_item(client, blind_round, blind_thread, stranger):
    client.force_login(stranger)
    assert client.get(thread_url(blind_thread, blind_round)).status_code == 404
    answer = client.get(f"/api/items/{blind_thread.pk}/comments/")
    assert answer.status_code == 404 and answer.json()["detail"]
    posted = client.post(
        f"/api/items/{blind_thread.pk}/comments/", {"body": "hello"}, content_type="application/json"
    )
    assert posted.status_code == 404


def test_a_reply_to_a_comment_the_annotator_cannot_read_is_refused(
    blind_round, blind_thread, annotator, other_annotator
):
    from discussion.models import Comment
    from discussion.services import CommentError

    bob_q = Comment.objects.get(body="Bob asks about trigger")
    with pytest.raises(CommentError) as refused:
        comment_post(user=annotator, item=blind_thread, body="what did you pick?", reply_to=bob_q.pk)
    assert "reply_to" in refused.value.problems
    assert not Comment.objects.filter(body="what did you pick?").exists()
