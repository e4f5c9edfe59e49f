"""Discussion on items (issue 27): comments on an item, written in a round, one level of replies,
and the notifications they send in the app. Who reads which comment is decided in
discussion.selectors (the blind rule), never stored."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Length
from django.db.models.lookups import LessThanOrEqual
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from annotator.models import Item, Round

#: the longest comment, in characters (the form, the API's schema and the services say so)
BODY_MAX = 5000


class Comment(models.Model):
    """A question or an answer on an item. ``parent`` is the root of the thread a reply belongs
    to (a reply to a reply is attached to that root: one level of threading); a reply is written
    in its root's round."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies"
    )
    body = models.TextField()
    #: the usernames the body mentions (``@name``) that named a user when it was written
    mentions = models.JSONField(default=list, blank=True)
    #: the author wrote as an adjudicator or admin: in a blind round an annotator reads such
    #: replies to their own question before submitting (discussion.selectors)
    by_staff = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(body=""), name="discussion_comment_not_blank"),
            models.CheckConstraint(
                condition=LessThanOrEqual(Length("body"), BODY_MAX), name="discussion_comment_max_length"
            ),
            models.CheckConstraint(condition=~Q(parent=F("id")), name="discussion_comment_not_own_parent"),
        ]
        indexes = [
            # a thread: the item's comments in order (the pages, the API, notifications' targets)
            models.Index(fields=["item", "created_at"], name="discussion_item_idx"),
        ]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.item_id}"

    @property
    def root_id(self) -> int:
        return self.parent_id or self.pk


class Notification(models.Model):
    """Tells a user about a comment they may read: a reply in a thread they wrote in, a mention of
    them, or (to adjudicators) an annotator's new question. One per user and comment."""

    class Kind(models.TextChoices):
        REPLY = "reply", _("reply")
        MENTION = "mention", _("mention")
        QUESTION = "question", _("new question")

    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    created_at = models.DateTimeField(default=timezone.now)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["recipient", "comment"], name="discussion_notification_once"),
            models.CheckConstraint(
                condition=Q(kind__in=["reply", "mention", "question"]), name="discussion_notification_kind"
            ),
        ]
        indexes = [
            # the unread badge on every page: one COUNT over a user's unread notifications
            models.Index(
                fields=["recipient"], condition=Q(read_at__isnull=True), name="discussion_unread_idx"
            ),
            # the notifications page: a user's newest first
            models.Index(fields=["recipient", "-created_at"], name="discussion_recipient_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.recipient_id} on comment {self.comment_id}"
