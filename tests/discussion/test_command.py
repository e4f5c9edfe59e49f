"""``manage.py discussion``: list an item's comments (all, or as a user reads them), post a
question or a reply, edit one's own, list and mark read a user's notifications. Bad input exits 2
with the reason, and writes nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from discussion.models import Comment, Notification
from discussion.services import comment_post
from tests.discussion.conftest import first_item

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command("discussion", *args, stdout=out)
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(*args)
    assert error.value.returncode == 2
    return str(error.value)


def test_post_a_question_and_a_reply_then_list_them(prefilled_round, annotator, adjudicator):
    item = first_item(prefilled_round)
    said = run("post", "--item", str(item.pk), "--user", "alice", "--body", "Which trigger?")
    question = Comment.objects.get()
    assert said == f"comment #{question.pk} posted in prefilled; 1 notified\n"
    run(
        "post",
        "--item",
        str(item.pk),
        "--user",
        "carol",
        "--body",
        "this one\nsee 4.2",
        "--reply-to",
        str(question.pk),
    )
    listed = run("list", "--item", str(item.pk))
    assert "alice in prefilled" in listed and "    Which trigger?" in listed
    assert f"carol [team] in prefilled reply to #{question.pk}" in listed and "        see 4.2" in listed
    assert Notification.objects.get(recipient=annotator).kind == "reply"


def test_list_as_a_user_keeps_the_blind_rule(blind_round, annotator, other_annotator):
    item = first_item(blind_round)
    comment_post(user=other_annotator, item=item, body="bob's question")
    assert "bob's question" in run("list", "--item", str(item.pk))
    assert "bob's question" not in run("list", "--item", str(item.pk), "--user", "alice")
    assert "no comments" in run("list", "--item", str(item.pk), "--user", "alice")


def test_edit_and_notifications(prefilled_round, annotator, adjudicator):
    item = first_item(prefilled_round)
    question = comment_post(user=annotator, item=item, body="draft")
    assert run("edit", "--comment", str(question.pk), "--user", "alice", "--body", "final") == (
        f"comment #{question.pk} changed\n"
    )
    assert Comment.objects.get().body == "final"
    listed = run("notifications", "--user", "carol", "--unread", "--mark-read")
    assert "UNREAD question alice on t1-0" in listed and listed.endswith("1 marked read\n")
    assert "no unread notifications for carol" in run("notifications", "--user", "carol", "--unread")


@pytest.mark.parametrize(
    "args, says",
    [
        (["post", "--item", "999", "--user", "alice", "--body", "x"], "item: no item 999"),
        (["post", "--item", "ITEM", "--user", "nobody", "--body", "x"], "user: no user named 'nobody'"),
        (["post", "--item", "ITEM", "--user", "eve", "--body", "x"], "not eve's to read"),
        (["post", "--item", "ITEM", "--user", "frank", "--body", "x"], "not frank's to read"),
        (["post", "--item", "ITEM", "--user", "alice", "--body", "  "], "body: write something"),
        (["post", "--item", "ITEM", "--user", "alice", "--body", "x" * 5001], "at most 5000"),
        (["post", "--item", "ITEM", "--user", "alice", "--body", "a\x1bb"], "U+001B"),
        (
            ["post", "--item", "ITEM", "--user", "alice", "--body", "x", "--reply-to", "77"],
            "reply_to: no comment 77",
        ),
        (
            ["post", "--item", "ITEM", "--user", "alice", "--body", "x", "--round", "9999"],
            "round: the item is not yours",
        ),
        (["edit", "--comment", "5", "--user", "alice", "--body", "x"], "comment: no comment 5"),
        (["list", "--item", "ITEM", "--user", "frank"], "not frank's to read"),
        (["notifications", "--user", "nobody"], "no user named"),
    ],
)
def test_bad_input_exits_2_naming_the_problem(prefilled_round, annotator, outsider, stranger, args, says):
    item = first_item(prefilled_round)
    assert says in refused(*[str(item.pk) if a == "ITEM" else a for a in args])
    assert not Comment.objects.exists()


def test_editing_another_users_comment_exits_2(prefilled_round, annotator, other_annotator):
    question = comment_post(user=annotator, item=first_item(prefilled_round), body="mine")
    assert "only its author" in refused("edit", "--comment", str(question.pk), "--user", "bob", "--body", "x")
    assert Comment.objects.get().body == "mine"


def test_a_bad_number_is_refused_by_the_parser(prefilled_round):
    """From the command line argparse exits 2 with this message; called in-process, it raises."""
    with pytest.raises(CommandError, match="invalid int value"):
        run("list", "--item", "abc")


def test_help_names_every_subcommand():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "manage.py", "discussion", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert all(name in result.stdout for name in ("list", "post", "edit", "notifications"))
