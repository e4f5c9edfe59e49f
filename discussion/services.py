"""Writes of the discussion: post a comment or a reply, edit one's own, and mark notifications
read. A post checks everything first and writes nothing when anything is wrong (CommentError
names each bad field: the API's 400, the page's, the command's exit 2); its notifications are
written with it, in one transaction, and go only to users who may read the comment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.models import Item
from annotator.roles import ADJUDICATOR
from discussion.models import Comment, Notification
from discussion.selectors import Reader, comment_for, may_read, reader_of
from discussion.text import body_problem, mention_candidates, mentioned


class CommentError(ValueError):
    """Values a post or an edit cannot take, each named by its field."""

    api_status = 400

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("; ".join(f"{k}: {v}" if k else v for k, v in self.problems.items()))

    def api_body(self) -> dict[str, Any]:
        return {(k or "detail"): ([v] if k else v) for k, v in self.problems.items()}


class CommentForbidden(CommentError):
    """The user may read the comment but not do this to it (edit another's)."""

    api_status = 403

    def __init__(self, message: str) -> None:
        super().__init__({"": message})


def _round_for(reader: Reader, round_id: Any, reply_to: Comment | None) -> tuple[int | None, str]:
    """The round a comment is written in, or the problem with the one asked for: a reply's is its
    question's; a new question's the one named, else the newest of the reader's rounds."""
    if reply_to is not None:
        if round_id is not None and round_id != reply_to.round_id:
            return None, _("a reply is written in its question's round (%(round)s)") % {
                "round": reply_to.round.name
            }
        return reply_to.round_id, ""
    if round_id is None:
        return (reader.rounds[0], "") if reader.rounds else (None, _("the item is in no round yet"))
    if round_id not in reader.rounds:
        if reader.staff:
            return None, _("the item is not in round %(round)s") % {"round": round_id}
        return None, _("the item is not yours in round %(round)s") % {"round": round_id}
    return round_id, ""


def _mentions(body: str) -> list[str]:
    candidates = mention_candidates(body)
    if not candidates:
        return []
    users = get_user_model().objects.filter(username__in=candidates).values_list("username", flat=True)
    return mentioned(body, users)


@transaction.atomic
def comment_post(
    *, user: Any, item: Item, body: str, round_id: int | None = None, reply_to: int | None = None
) -> Comment:
    """A new question on ``item`` (in ``round_id``, or the newest round the item is the user's),
    or a reply to the thread of comment ``reply_to`` (a reply to a reply joins that reply's
    thread). The user must be able to read the item's discussion (the views answer 404 before
    otherwise) and the comment replied to."""
    reader = reader_of(user, item)
    if reader is None:
        raise CommentError({"item": _("item %(item)s is not yours to discuss") % {"item": item.pk}})
    problems: dict[str, str] = {}
    problem = body_problem(body)
    if problem:
        problems["body"] = problem
    parent = None
    if reply_to is not None:
        parent = comment_for(reader, item, reply_to)
        if parent is None:
            problems["reply_to"] = _("no comment %(id)s on this item that you can read") % {"id": reply_to}
        elif parent.parent_id is not None:  # one level of threading: join the question's thread
            parent = Comment.objects.select_related("round").get(pk=parent.parent_id)
    if "reply_to" not in problems:
        round_, problem = _round_for(reader, round_id, parent)
        if problem:
            problems["round"] = problem
    if problems:
        raise CommentError(problems)
    comment = Comment.objects.create(
        item=item,
        round_id=round_,
        author=user,
        parent=parent,
        body=body.strip(),
        mentions=_mentions(body),
        by_staff=reader.staff,
    )
    _notify(comment, parent=parent, reader=reader)
    return comment


@transaction.atomic
def comment_edit(*, user: Any, comment: Comment, body: str) -> Comment:
    """The author changes their comment's text; a user it newly mentions is told."""
    if comment.author_id != user.pk:
        raise CommentForbidden(_("only its author edits a comment"))
    problem = body_problem(body)
    if problem:
        raise CommentError({"body": problem})
    before = set(comment.mentions)
    Comment.objects.filter(pk=comment.pk).update(
        body=body.strip(), mentions=_mentions(body), edited_at=timezone.now()
    )
    comment.refresh_from_db()
    fresh = [name for name in comment.mentions if name not in before]
    _tell(comment, _mentioned_users(fresh, comment), Notification.Kind.MENTION)
    return comment


def _mentioned_users(names: list[str], comment: Comment) -> list[Any]:
    return list(
        get_user_model().objects.filter(username__in=names, is_active=True).exclude(pk=comment.author_id)
    )


def _notify(comment: Comment, *, parent: Comment | None, reader: Reader) -> None:
    """Who hears of a new comment, once each: for a reply, the question's author and everyone who
    replied before; for an annotator's question, the adjudicators; anyone it mentions. Only users
    who may read it (a mention of someone who may not is left as text)."""
    users = get_user_model().objects.filter(is_active=True).exclude(pk=comment.author_id)
    if parent is not None:
        earlier = Comment.objects.filter(parent=parent, pk__lt=comment.pk).values("author_id")
        _tell(
            comment,
            users.filter(pk__in=[parent.author_id]) | users.filter(pk__in=earlier),
            Notification.Kind.REPLY,
        )
    elif not reader.staff:
        _tell(comment, users.filter(groups__name=ADJUDICATOR), Notification.Kind.QUESTION)
    _tell(comment, _mentioned_users(comment.mentions, comment), Notification.Kind.MENTION)


def _tell(comment: Comment, users: Any, kind: str) -> None:
    """A notification of ``kind`` to each of ``users`` who may read the comment and has none of
    it yet (a reply to your question that mentions you is one reply)."""
    told = set(Notification.objects.filter(comment=comment).values_list("recipient_id", flat=True))
    made = [
        Notification(recipient=user, comment=comment, kind=kind)
        for user in {u.pk: u for u in users}.values()
        if user.pk not in told and may_read(user, comment)
    ]
    Notification.objects.bulk_create(made)


def notification_read(*, user: Any, notification: Notification) -> bool:
    """Mark one of the user's notifications read; False when it was already."""
    if notification.recipient_id != user.pk:
        raise CommentForbidden(_("not your notification"))
    return bool(
        Notification.objects.filter(pk=notification.pk, read_at__isnull=True).update(read_at=timezone.now())
    )


def notifications_read_all(*, user: Any) -> int:
    """Mark every unread notification of the user read; how many were."""
    return Notification.objects.filter(recipient=user, read_at__isnull=True).update(read_at=timezone.now())
