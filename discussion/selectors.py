"""Reads of the discussion: who may read which comment, the threads of an item as one user sees
them, a user's notifications and the page each one leads to.

Who reads what: adjudicators and admins read every comment on every item. An annotator reads the
comments written in a round in which the item is theirs; in a blind round, until they have
submitted their own annotation of the item, only their own comments and the replies that
adjudicators and admins wrote to them, so that nothing tells them what another annotator answered.
A user without a role reads nothing."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import reverse

from adjudication.models import GoldItem
from annotator.models import Assignment, Item, Round
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR, user_roles
from discussion.models import Comment, Notification

STAFF = frozenset({ADJUDICATOR, ADMIN})

User = AbstractBaseUser | AnonymousUser


def is_staff(user: User) -> bool:
    """Adjudicators and admins: they read every comment, and their replies reach an annotator in
    a blind round before the annotator submits."""
    return bool(user_roles(user) & STAFF)


@dataclass(frozen=True)
class Reader:
    """What one user may do in an item's discussion. ``rounds``: the rounds they may write in
    (the item's rounds for adjudicators and admins, the rounds where it is theirs for an
    annotator), newest first; ``limited``: the blind rounds where they have not submitted it yet."""

    user: Any
    staff: bool
    rounds: tuple[int, ...]
    limited: frozenset[int] = field(default_factory=frozenset)


def reader_of(user: User, item: Item) -> Reader | None:
    """The user's access to the item's discussion, or None: the item is not theirs to discuss
    (the pages and the API answer 404, as for an item that does not exist)."""
    roles = user_roles(user)
    if roles & STAFF:
        rounds = Assignment.objects.filter(item=item).values_list("round_id", flat=True).distinct()
        return Reader(user=user, staff=True, rounds=tuple(sorted(set(rounds), reverse=True)))
    if ANNOTATOR not in roles:
        return None
    mine = Assignment.objects.filter(annotator=user, item=item).values_list(
        "round_id", "status", "round__mode"
    )
    rounds: set[int] = set()
    limited: set[int] = set()
    for round_id, status, mode in mine:
        rounds.add(round_id)
        if mode == Round.Mode.BLIND and status != Assignment.Status.DONE:
            limited.add(round_id)
    if not rounds:
        return None
    return Reader(
        user=user, staff=False, rounds=tuple(sorted(rounds, reverse=True)), limited=frozenset(limited)
    )


def visible_comments(reader: Reader, item: Item) -> QuerySet[Comment]:
    """The item's comments the reader may read, oldest first."""
    comments = Comment.objects.filter(item=item)
    if reader.staff:
        return comments
    open_rounds = [r for r in reader.rounds if r not in reader.limited]
    own = Q(author=reader.user) | Q(by_staff=True, parent__author=reader.user)
    return comments.filter(Q(round_id__in=open_rounds) | (Q(round_id__in=reader.limited) & own))


def may_read(user: User, comment: Comment) -> bool:
    """Whether ``user`` may read ``comment`` now (a notification goes only to such a user)."""
    reader = reader_of(user, comment.item)
    return reader is not None and visible_comments(reader, comment.item).filter(pk=comment.pk).exists()


def comment_for(reader: Reader, item: Item, comment_id: Any) -> Comment | None:
    """A comment on ``item`` the reader may read, or None."""
    if not isinstance(comment_id, int) or isinstance(comment_id, bool):
        return None
    return visible_comments(reader, item).select_related("round").filter(pk=comment_id).first()


@dataclass
class Thread:
    root: Comment
    replies: list[Comment]


def threads(reader: Reader, item: Item) -> list[Thread]:
    """The item's threads as the reader sees them: each question with its replies, oldest first.
    A reply is shown under its question only (the reader reads it only where they read that)."""
    comments = list(visible_comments(reader, item).select_related("author", "round"))
    replies: dict[int, list[Comment]] = defaultdict(list)
    for comment in comments:
        if comment.parent_id is not None:
            replies[comment.parent_id].append(comment)
    return [Thread(root=c, replies=replies[c.pk]) for c in comments if c.parent_id is None]


# Notifications --------------------------------------------------------------------------------


def notifications_of(user: User) -> QuerySet[Notification]:
    """The user's notifications about comments they may still read, newest first. The comment was
    readable when the notification was made; an annotator whose item has gone to someone else
    (taken out of the round's pool) no longer reads it."""
    found = Notification.objects.filter(recipient=user)
    if is_staff(user):
        return found
    theirs = Assignment.objects.filter(
        annotator=user, round_id=OuterRef("comment__round_id"), item_id=OuterRef("comment__item_id")
    )
    return found.filter(Exists(theirs))


def unread_count(user: User) -> int:
    """The badge's number: one COUNT over the partial index of unread notifications."""
    return notifications_of(user).filter(read_at__isnull=True).count()


def item_page(user: User, *, item_id: int, round_id: int) -> str:
    """Where the user works on the item in the round: an adjudicator's or admin's gold record of
    it (its conflict page while it has none), an annotator's annotation page; the discussion's
    own page where neither exists (an item mixed into a round as a control)."""
    return item_pages(user, [(item_id, round_id)])[(item_id, round_id)]


def item_pages(user: User, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], str]:
    """item_page for many (item, round) pairs in three queries at most."""
    wanted = set(pairs)
    items = {item for item, _ in wanted}
    pages: dict[tuple[int, int], str] = {}
    if is_staff(user):
        gold = set(GoldItem.objects.filter(item_id__in=items).values_list("item_id", "round_id"))
        conflict = set(
            Assignment.objects.filter(item_id__in=items, control=False).values_list("item_id", "round_id")
        )
        for item, round_ in wanted:
            if (item, round_) in gold:
                pages[(item, round_)] = reverse("gold_item", args=[round_, item])
            elif (item, round_) in conflict:
                pages[(item, round_)] = reverse("conflict_item", args=[round_, item])
    else:
        mine = Assignment.objects.filter(annotator=user, item_id__in=items).values_list(
            "item_id", "round_id", "pk"
        )
        for item, round_, assignment in mine:
            if (item, round_) in wanted:
                pages[(item, round_)] = reverse("annotate", args=[assignment])
    for item, round_ in wanted:
        pages.setdefault((item, round_), reverse("discussion_thread", args=[item, round_]))
    return pages


@dataclass
class NotificationRow:
    notification: Notification
    url: str


def notification_rows(user: User, *, unread_only: bool = False, limit: int = 100) -> list[NotificationRow]:
    """The notifications page: the newest ``limit``, each with the page its item is worked on."""
    found = notifications_of(user).select_related("comment__author", "comment__item", "comment__round")
    if unread_only:
        found = found.filter(read_at__isnull=True)
    listed = list(found[:limit])
    pages = item_pages(user, [(n.comment.item_id, n.comment.round_id) for n in listed])
    return [
        NotificationRow(n, f"{pages[(n.comment.item_id, n.comment.round_id)]}#comment-{n.comment_id}")
        for n in listed
    ]
