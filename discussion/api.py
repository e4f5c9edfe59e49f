"""The discussion through the API: an item's comments (list, post a question or a reply), one
comment (read, its author edits it), and the user's notifications (list, mark one or all read).
Anyone with a role, each reading what the pages show them (discussion.selectors): an item whose
discussion is not theirs is a 404, as one that does not exist. Bodies are JSON only and typed
strictly; a bad value is a 400 naming its field, and nothing is written."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotator.api_fields import Text, Whole, read_body
from annotator.filters import MAX_ID, typed_id
from annotator.models import Item
from discussion.forms import NotificationQuery
from discussion.models import BODY_MAX, Comment, Notification
from discussion.selectors import Reader, item_pages, notifications_of, reader_of, visible_comments
from discussion.services import comment_edit, comment_post, notification_read, notifications_read_all
from discussion.text import BODY_PATTERN, body_problem


class _View(APIView):
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)


def _discussion(user: Any, item_id: int) -> tuple[Item, Reader]:
    item = Item.objects.filter(pk=item_id).first() if item_id <= MAX_ID else None
    reader = reader_of(user, item) if item is not None else None
    if reader is None:
        raise Http404(_("No item %(id)s whose discussion you can read") % {"id": item_id})
    return item, reader


# Answers ---------------------------------------------------------------------------------------


class CommentOut(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    round = serializers.IntegerField(source="round_id", help_text="the round it was written in")
    round_name = serializers.CharField(source="round.name")
    author = serializers.CharField(
        source="author.username", default=None, allow_null=True, help_text="null: a deleted user"
    )
    by_staff = serializers.BooleanField(help_text="written by an adjudicator or admin")
    reply_to = serializers.IntegerField(
        source="parent_id", allow_null=True, help_text="the question this replies to; null: a question"
    )
    body = serializers.CharField()
    mentions = serializers.ListField(
        child=serializers.CharField(), help_text="the users it mentions (@username) that existed when written"
    )
    created_at = serializers.DateTimeField()
    edited_at = serializers.DateTimeField(allow_null=True)


class NotificationOut(serializers.Serializer):
    id = serializers.IntegerField()
    # text, not an enum: the schema's "kind" enums are another's (exports), named by the field
    kind = serializers.CharField(
        help_text="reply (in a thread you wrote in), mention (you are named) or question (an annotator "
        "asks the adjudicators)",
    )
    comment = CommentOut()
    url = serializers.CharField(help_text="the page the item is worked on, at the comment")
    created_at = serializers.DateTimeField()
    read_at = serializers.DateTimeField(allow_null=True, help_text="null: unread")


class MarkedOut(serializers.Serializer):
    marked = serializers.IntegerField(help_text="how many were unread")


# Requests --------------------------------------------------------------------------------------


BODY_HELP = gettext_lazy(
    "the text: at most 5000 characters, not blank, no control character but a line break (\\n); "
    "@username mentions a user"
)


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": BODY_MAX, "pattern": BODY_PATTERN})
class CommentBody(Text):
    """A comment's text, checked by body_problem (the page's and the command's check too), which
    names what is wrong; kept as sent (the service trims it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, help_text=BODY_HELP, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        problem = body_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class CommentIn(serializers.Serializer):
    refuses_unknown_fields = True
    body = CommentBody()
    round = Whole(
        required=False, min_value=1, max_value=MAX_ID,
        help_text="the round a question is written in (a round of the item; yours, for an annotator); "
        "default: the newest such round. A reply is written in its question's round.",
    )  # fmt: skip
    reply_to = Whole(
        required=False, min_value=1, max_value=MAX_ID,
        help_text="the comment this replies to (a reply to a reply joins its question's thread)",
    )  # fmt: skip


class CommentEditIn(serializers.Serializer):
    refuses_unknown_fields = True
    body = CommentBody()


def _query_int(request: Request, name: str) -> int | Response | None:
    """An optional whole-number query parameter, or the 400 naming it."""
    value = request.query_params.get(name)
    if value is None:
        return None
    number = typed_id(value)
    if not number:  # None, or 0
        return Response({name: [_("a whole number from 1")]}, status=status.HTTP_400_BAD_REQUEST)
    return number


def _comments(reader: Reader, item: Item) -> Any:
    return visible_comments(reader, item).select_related("author", "round")


BAD_QUERY = OpenApiResponse(OpenApiTypes.OBJECT, description="a bad query parameter, named")
NOT_YOURS = OpenApiResponse(OpenApiTypes.OBJECT, description="no such item, or its discussion is not yours")


# Views -----------------------------------------------------------------------------------------


class CommentList(_View):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "round",
                {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                description="only the comments written in this round",
            )
        ],
        responses={200: CommentOut(many=True), 400: BAD_QUERY, 404: NOT_YOURS},
        description="The item's comments you may read, oldest first: every comment for adjudicators and "
        "admins; for an annotator those of the rounds where the item is theirs, and in a blind round, "
        "until they submit it, only their own and the replies adjudicators and admins wrote to them.",
    )
    def get(self, request: Request, pk: int) -> Response:
        item, reader = _discussion(request.user, pk)
        round_id = _query_int(request, "round")
        if isinstance(round_id, Response):
            return round_id
        comments = _comments(reader, item)
        if round_id is not None:
            comments = comments.filter(round_id=round_id)
        return Response(CommentOut(comments, many=True).data)

    @extend_schema(
        request=CommentIn,
        responses={201: CommentOut, 404: NOT_YOURS},
        description="A question on the item, or with reply_to a reply. Beyond the schema a 400 names: a "
        "round that is not the item's (yours, for an annotator), a reply_to that names no comment on "
        "the item you may read, a round other than the question's for a reply. The adjudicators hear "
        "of an annotator's question; a reply's thread and the users it mentions who may read it hear "
        "of it (notifications).",
    )
    def post(self, request: Request, pk: int) -> Response:
        item, _reader = _discussion(request.user, pk)
        values = read_body(CommentIn, request)
        if isinstance(values, Response):
            return values
        comment = comment_post(
            user=request.user, item=item, body=values["body"], round_id=values.get("round"),
            reply_to=values.get("reply_to"),
        )  # fmt: skip
        made = Comment.objects.select_related("author", "round").get(pk=comment.pk)
        return Response(CommentOut(made).data, status=status.HTTP_201_CREATED)


def _comment(user: Any, pk: int) -> Comment:
    comment = get_object_or_404(Comment.objects.select_related("item"), pk=pk) if pk <= MAX_ID else None
    reader = reader_of(user, comment.item) if comment is not None else None
    if reader is None or not _comments(reader, comment.item).filter(pk=pk).exists():
        raise Http404(_("No comment %(id)s that you can read") % {"id": pk})
    return Comment.objects.select_related("author", "round").get(pk=pk)


class CommentDetail(_View):
    @extend_schema(
        responses={
            200: CommentOut,
            404: OpenApiResponse(OpenApiTypes.OBJECT, description="none you can read"),
        }
    )
    def get(self, request: Request, pk: int) -> Response:
        return Response(CommentOut(_comment(request.user, pk)).data)

    @extend_schema(
        request=CommentEditIn,
        responses={
            200: CommentOut,
            403: OpenApiResponse(OpenApiTypes.OBJECT, description="not your comment"),
            404: OpenApiResponse(OpenApiTypes.OBJECT, description="none you can read"),
        },
        description="Its author changes the text; a user it newly mentions who may read it is told.",
    )
    def patch(self, request: Request, pk: int) -> Response:
        comment = _comment(request.user, pk)
        values = read_body(CommentEditIn, request)
        if isinstance(values, Response):
            return values
        comment_edit(user=request.user, comment=comment, body=values["body"])
        return Response(CommentOut(Comment.objects.select_related("author", "round").get(pk=pk)).data)


def _notifications_out(user: Any, notifications: list[Notification]) -> list[dict[str, Any]]:
    pages = item_pages(user, [(n.comment.item_id, n.comment.round_id) for n in notifications])
    for n in notifications:
        n.url = f"{pages[(n.comment.item_id, n.comment.round_id)]}#comment-{n.comment_id}"
    return NotificationOut(notifications, many=True).data


class NotificationList(_View):
    @extend_schema(
        parameters=[
            OpenApiParameter("unread", OpenApiTypes.BOOL, description="true: only the unread ones"),
        ],
        responses={200: NotificationOut(many=True), 400: BAD_QUERY},
        description="Your notifications, newest first (the newest 200).",
    )
    def get(self, request: Request) -> Response:
        query = NotificationQuery(request.query_params)
        if not query.is_valid():
            return Response(query.errors, status=status.HTTP_400_BAD_REQUEST)
        unread = query.cleaned_data["unread"]
        found = notifications_of(request.user).select_related("comment__author", "comment__round")
        if unread:
            found = found.filter(read_at__isnull=True)
        return Response(_notifications_out(request.user, list(found[:200])))


class NotificationRead(_View):
    @extend_schema(
        operation_id="notification_read",
        request=None,
        responses={200: NotificationOut, 404: OpenApiResponse(OpenApiTypes.OBJECT, description="not yours")},
        description="Mark one of your notifications read (again: no change).",
    )
    def post(self, request: Request, pk: int) -> Response:
        found = notifications_of(request.user).select_related("comment__author", "comment__round")
        notification = get_object_or_404(found, pk=pk) if pk <= MAX_ID else None
        if notification is None:
            raise Http404
        notification_read(user=request.user, notification=notification)
        notification.refresh_from_db(fields=["read_at"])
        return Response(_notifications_out(request.user, [notification])[0])


class NotificationsReadAll(_View):
    @extend_schema(
        operation_id="notifications_read_all",
        request=None,
        responses={200: MarkedOut},
        description="Mark all your notifications read.",
    )
    def post(self, request: Request) -> Response:
        return Response({"marked": notifications_read_all(user=request.user)})
