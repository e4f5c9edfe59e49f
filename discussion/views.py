"""The discussion's pages: an item's threads (loaded by htmx into the annotation, conflict and gold
pages, or a page of their own without JavaScript), posting and editing a comment, the unread
badge of the menu and the notifications page. An item that is not the user's to discuss is a 404,
as one that does not exist."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from adjudication.forms import refused_query
from annotator.models import Item, Round
from discussion.forms import CommentForm, NotificationQuery
from discussion.models import BODY_MAX, Comment
from discussion.selectors import (
    Reader,
    item_page,
    notification_rows,
    notifications_of,
    reader_of,
    threads,
    unread_count,
)
from discussion.services import (
    CommentError,
    comment_edit,
    comment_post,
    notification_read,
    notifications_read_all,
)


def _discussion_or_404(request: HttpRequest, item_id: int, round_id: int) -> tuple[Item, Round, Reader]:
    item = get_object_or_404(Item, pk=item_id)
    reader = reader_of(request.user, item)
    if reader is None or round_id not in reader.rounds:
        raise Http404(_("No discussion of that item in that round for you"))
    return item, get_object_or_404(Round, pk=round_id), reader


def _thread(
    request: HttpRequest,
    item: Item,
    round_: Round,
    reader: Reader,
    *,
    form: CommentForm | None = None,
    errors: dict[str, str] | None = None,
    editing: int | None = None,
    status: int = 200,
) -> HttpResponse:
    """The threads: the fragment for htmx, the page without it. A refused post keeps what was
    written in the form it came from, with the problem beside it."""
    posted: dict[str, Any] = {}
    if form is not None:
        posted = {"body": form.data.get("body", ""), "reply_to": form.data.get("reply_to", "")}
        if errors is None:
            errors = form.problems()
    listed = threads(reader, item)
    # where a refused text is shown again, with its problem: the form it came from
    reply_open = None
    if errors and editing is None:
        reply_open = next((t.root.pk for t in listed if str(t.root.pk) == posted.get("reply_to")), None)
    next_url = (form or CommentForm(request.GET)).next_url()
    context = {
        "item": item,
        "round": round_,
        "threads": listed,
        "staff": reader.staff,
        "limited": round_.pk in reader.limited,
        "errors": errors or {},
        "posted": posted,
        "reply_open": reply_open,
        "new_error": bool(errors) and editing is None and reply_open is None,
        "next": next_url,
        "back": next_url or item_page(request.user, item_id=item.pk, round_id=round_.pk),
        "body_max": BODY_MAX,
        "editing": editing,
    }
    if request.htmx:
        return render(request, "discussion/_thread.html", context, status=status)
    context["text"] = item.text_for(round_.text_field)
    return render(request, "discussion/thread.html", context, status=status)


@login_required
@require_GET
def thread(request: HttpRequest, item_id: int, round_id: int) -> HttpResponse:
    item, round_, reader = _discussion_or_404(request, item_id, round_id)
    return _thread(request, item, round_, reader)


def _done(
    request: HttpRequest, form: CommentForm, item: Item, round_: Round, reader: Reader, comment: Comment
):
    if request.htmx:
        return _thread(request, item, round_, reader)
    back = form.next_url() or item_page(request.user, item_id=item.pk, round_id=round_.pk)
    return redirect(f"{back}#comment-{comment.pk}")


@login_required
@require_POST
def comment_create(request: HttpRequest, item_id: int, round_id: int) -> HttpResponse:
    """A question in the round, or a reply (``reply_to``); 400 naming the problem, nothing kept."""
    item, round_, reader = _discussion_or_404(request, item_id, round_id)
    form = CommentForm(request.POST)
    if not form.is_valid():
        return _thread(request, item, round_, reader, form=form, status=400)
    reply_to = form.cleaned_data["reply_to"]
    try:
        comment = comment_post(
            user=request.user,
            item=item,
            body=form.cleaned_data["body"],
            round_id=None if reply_to else round_.pk,
            reply_to=reply_to,
        )
    except CommentError as error:
        return _thread(request, item, round_, reader, form=form, errors=error.problems, status=400)
    if not request.htmx:
        messages.success(request, _("Comment posted."))
    return _done(request, form, item, round_, reader, comment)


@login_required
@require_POST
def comment_update(request: HttpRequest, item_id: int, round_id: int, comment_id: int) -> HttpResponse:
    """The author's new text for their comment."""
    item, round_, reader = _discussion_or_404(request, item_id, round_id)
    comment = get_object_or_404(Comment, pk=comment_id, item=item, author=request.user)
    form = CommentForm(request.POST)
    if not form.is_valid():
        return _thread(request, item, round_, reader, form=form, editing=comment.pk, status=400)
    try:
        comment_edit(user=request.user, comment=comment, body=form.cleaned_data["body"])
    except CommentError as error:
        return _thread(
            request, item, round_, reader, form=form, errors=error.problems, editing=comment.pk, status=400
        )
    if not request.htmx:
        messages.success(request, _("Comment changed."))
    return _done(request, form, item, round_, reader, comment)


# Notifications --------------------------------------------------------------------------------


@login_required
@require_GET
def badge(request: HttpRequest) -> HttpResponse:
    """The menu's unread count (htmx, after the page): one COUNT."""
    return render(request, "discussion/_badge.html", {"unread": unread_count(request.user)})


@login_required
@require_GET
def notifications(request: HttpRequest) -> HttpResponse:
    query = NotificationQuery(request.GET)
    if not query.is_valid():
        return refused_query(request, query)
    unread_only = query.cleaned_data["unread"]
    context = {
        "rows": notification_rows(request.user, unread_only=unread_only),
        "unread_only": unread_only,
        "unread": unread_count(request.user),
    }
    return render(request, "discussion/notifications.html", context)


@login_required
@require_POST
def notification_open(request: HttpRequest, pk: int) -> HttpResponse:
    """Mark the notification read and go to the page of its item, at the comment."""
    notification = get_object_or_404(notifications_of(request.user).select_related("comment"), pk=pk)
    notification_read(user=request.user, notification=notification)
    comment = notification.comment
    page = item_page(request.user, item_id=comment.item_id, round_id=comment.round_id)
    return redirect(f"{page}#comment-{comment.pk}")


@login_required
@require_POST
def notifications_mark_read(request: HttpRequest) -> HttpResponse:
    marked = notifications_read_all(user=request.user)
    messages.success(
        request,
        ngettext("%(n)s notification marked read.", "%(n)s notifications marked read.", marked)
        % {"n": marked},
    )
    return redirect("notifications")
