"""The discussion from the command line: ``manage.py discussion list --item ID [--round ID]
[--user NAME] | post --item ID --user NAME --body TEXT [--reply-to ID] [--round ID] | edit
--comment ID --user NAME --body TEXT | notifications --user NAME [--unread] [--mark-read]``.
``list`` without ``--user`` prints every comment (an admin's view); with it, what that user reads.
Bad input: exit 2 with the line that says why, nothing written."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotator.models import Item
from discussion.models import Comment
from discussion.selectors import Reader, item_page, notifications_of, reader_of, visible_comments
from discussion.services import CommentError, comment_edit, comment_post, notifications_read_all


def _bad(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "List, post and edit comments on items; list and mark read a user's notifications."

    def add_arguments(self, parser: Any) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("list", help="an item's comments, oldest first, replies under their question")
        show.add_argument("--item", type=int, required=True, help="the item's id")
        show.add_argument("--round", type=int, default=None, help="only the comments written in this round")
        show.add_argument("--user", default="", help="as this user reads them (default: every comment)")
        post = sub.add_parser("post", help="a question on an item, or a reply (--reply-to)")
        post.add_argument("--item", type=int, required=True, help="the item's id")
        post.add_argument("--user", required=True, help="the author's username")
        post.add_argument("--body", required=True, help="the text (@username mentions a user)")
        post.add_argument("--reply-to", type=int, default=None, help="the comment this replies to")
        post.add_argument(
            "--round", type=int, default=None,
            help="the round of a question (default: the newest round the item is the author's)",
        )  # fmt: skip
        edit = sub.add_parser("edit", help="its author changes a comment's text")
        edit.add_argument("--comment", type=int, required=True, help="the comment's id")
        edit.add_argument("--user", required=True, help="the author's username")
        edit.add_argument("--body", required=True, help="the new text")
        told = sub.add_parser("notifications", help="a user's notifications, newest first")
        told.add_argument("--user", required=True, help="whose")
        told.add_argument("--unread", action="store_true", help="only the unread ones")
        told.add_argument("--mark-read", action="store_true", help="then mark them all read")

    def handle(self, *args: Any, action: str, **o: Any) -> None:
        getattr(self, "_" + action.replace("-", "_"))(**o)

    def _user(self, name: str) -> Any:
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise _bad(f"user: no user named {name!r}")
        return user

    def _item(self, item_id: int) -> Item:
        item = Item.objects.filter(pk=item_id).first()
        if item is None:
            raise _bad(f"item: no item {item_id}")
        return item

    def _reader(self, user: Any, item: Item) -> Reader:
        reader = reader_of(user, item)
        if reader is None:
            raise _bad(f"item: the discussion of item {item.pk} is not {user.username}'s to read")
        return reader

    def _list(self, item: int, round: int | None, user: str, **o: Any) -> None:
        found = self._item(item)
        if user:
            comments = visible_comments(self._reader(self._user(user), found), found)
        else:
            comments = Comment.objects.filter(item=found)
        if round is not None:
            comments = comments.filter(round_id=round)
        rows = list(comments.select_related("author", "round"))
        if not rows:
            self.stdout.write(f"no comments on item {found.pk} ({found.source_id})")
        shown = {c.pk for c in rows}
        for c in rows:
            if c.parent_id is not None and c.parent_id in shown:
                continue
            self._write(c, indent="")
            for reply in rows:
                if reply.parent_id == c.pk:
                    self._write(reply, indent="    ")

    def _write(self, c: Comment, *, indent: str) -> None:
        who = c.author.username if c.author else "(deleted user)"
        team = " [team]" if c.by_staff else ""
        edited = " (edited)" if c.edited_at else ""
        reply = f" reply to #{c.parent_id}" if c.parent_id else ""
        self.stdout.write(
            f"{indent}#{c.pk} {c.created_at:%Y-%m-%d %H:%M} {who}{team} in {c.round.name}{reply}{edited}"
        )
        for line in c.body.splitlines():
            self.stdout.write(f"{indent}    {line}")

    def _post(
        self, item: int, user: str, body: str, reply_to: int | None, round: int | None, **o: Any
    ) -> None:
        author, found = self._user(user), self._item(item)
        self._reader(author, found)
        try:
            comment = comment_post(user=author, item=found, body=body, round_id=round, reply_to=reply_to)
        except CommentError as error:
            raise _bad("\n".join(f"{k}: {m}" if k else m for k, m in error.problems.items())) from None
        told = comment.notifications.count()
        self.stdout.write(f"comment #{comment.pk} posted in {comment.round.name}; {told} notified")

    def _edit(self, comment: int, user: str, body: str, **o: Any) -> None:
        author = self._user(user)
        found = Comment.objects.select_related("item").filter(pk=comment).first()
        if found is None:
            raise _bad(f"comment: no comment {comment}")
        try:
            comment_edit(user=author, comment=found, body=body)
        except CommentError as error:
            raise _bad("\n".join(f"{k}: {m}" if k else m for k, m in error.problems.items())) from None
        self.stdout.write(f"comment #{found.pk} changed")

    def _notifications(self, user: str, unread: bool, mark_read: bool, **o: Any) -> None:
        who = self._user(user)
        found = notifications_of(who).select_related("comment__author", "comment__item")
        if unread:
            found = found.filter(read_at__isnull=True)
        rows = list(found)
        if not rows:
            self.stdout.write(f"no {'unread ' if unread else ''}notifications for {who.username}")
        for n in rows:
            c = n.comment
            state = "read" if n.read_at else "UNREAD"
            author = c.author.username if c.author else "(deleted user)"
            page = item_page(who, item_id=c.item_id, round_id=c.round_id)
            self.stdout.write(
                f"{n.created_at:%Y-%m-%d %H:%M} {state:<6} {n.kind:<8} {author} on {c.item.source_id} "
                f"(#{c.pk}) {page}#comment-{c.pk}"
            )
        if mark_read:
            self.stdout.write(f"{notifications_read_all(user=who)} marked read")
