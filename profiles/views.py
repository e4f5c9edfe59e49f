"""Annotator profiles' pages: the list (adjudicators and admins see every annotator, anyone else
with a role only themselves), one profile with its digest (an annotator opens only their own;
any other is a 404), ``profiles/me/``, and the per-slot table as CSV. ``?round=`` (a round's id)
narrows every figure to one round, ``?page=`` turns the digest's pages (htmx swaps the digest
alone; the links work without it)."""

from __future__ import annotations

import math
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from adjudication.downloads import csv_response
from adjudication.forms import refused_query
from annotator.models import Assignment, Round
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR, require_role, user_roles
from nsmcore.charts import Bar, whisker_bars
from profiles.forms import ProfileQuery
from profiles.selectors import (
    HUMAN,
    NotFound,
    Profile,
    ProfileError,
    can_see_all,
    profile_digest,
    profile_of,
    profile_subject,
    profile_users,
    profiles_of,
)
from profiles.tables import slot_table

ROLES = (ANNOTATOR, ADJUDICATOR, ADMIN)
TOP_FLOWS = 10
CHART_WIDTH = 560.0


def _query(request: HttpRequest) -> ProfileQuery:
    query = ProfileQuery(request.GET)
    query.is_valid()
    return query


def _subject(request: HttpRequest, username: str):
    try:
        return profile_subject(viewer=request.user, username=username)
    except NotFound:
        raise Http404("No such profile") from None


def _round_choices(request: HttpRequest, subject=None) -> list[Round]:
    """The rounds the filter offers: human rounds with submitted work (of the subject, when the
    reader sees only their own)."""
    done = Assignment.objects.filter(status=Assignment.Status.DONE)
    if subject is not None and not can_see_all(request.user):
        done = done.filter(annotator=subject)
    elif subject is None and not can_see_all(request.user):
        done = done.filter(annotator=request.user)
    return list(Round.objects.filter(pk__in=done.values("round_id"), pass_kind=HUMAN).order_by("name"))


def _round_param(scope) -> str:
    return urlencode({"round": scope.chosen.pk}) if scope.chosen else ""


@require_GET
@require_role(*ROLES)
def profile_list(request: HttpRequest) -> HttpResponse:
    query = _query(request)
    if query.errors:
        return refused_query(request, query)
    scope = query.cleaned_data["scope"]
    rows = profiles_of(users=profile_users(viewer=request.user, scope=scope), scope=scope)
    context = {
        "scope": scope,
        "rows": rows,
        "round_param": _round_param(scope),
        "rounds": _round_choices(request),
        "sees_all": can_see_all(request.user),
    }
    return render(request, "profiles/list.html", context)


@require_GET
@require_role(*ROLES)
def profile_me(request: HttpRequest) -> HttpResponse:
    """The reader's own profile, with the query string kept."""
    url = reverse("profile", args=[request.user.get_username()])
    return redirect(f"{url}?{request.GET.urlencode()}" if request.GET else url)


def throughput_chart(profile: Profile) -> dict[str, Any] | None:
    """Bars of items submitted per day (per week over a long span), a label under every few."""
    periods = profile.throughput
    if not periods:
        return None
    width = max(3.0, min(28.0, CHART_WIDTH / len(periods) * 0.8))
    gap = max(1.0, width / 4)
    chart = whisker_bars(
        [Bar(p.start.isoformat(), float(p.items)) for p in periods], bar_width=width, gap=gap, label_room=40.0
    )
    every = math.ceil(len(periods) / 8)
    for k, (bar, period) in enumerate(zip(chart["bars"], periods, strict=True)):
        bar |= {"start": period.start, "days": period.days, "items": period.items, "labelled": k % every == 0}
    chart["weekly"] = periods[0].days == 7
    return chart


def _profile_context(request: HttpRequest, username: str) -> tuple[dict[str, Any] | None, ProfileQuery]:
    subject = _subject(request, username)
    query = _query(request)
    if query.errors:
        return None, query
    scope = query.cleaned_data["scope"]
    try:
        digest = profile_digest(user=subject, scope=scope, page=query.cleaned_data["page"])
    except ProfileError as error:
        query.add_error(error.field, str(error))
        return None, query
    profile = profile_of(user=subject, scope=scope)
    viewer_roles = user_roles(request.user)
    context = {
        "subject": subject,
        "profile": profile,
        "scope": scope,
        "digest": digest,
        "flows": profile.flows[:TOP_FLOWS],
        "chart": throughput_chart(profile),
        "round_param": _round_param(scope),
        "rounds": _round_choices(request, subject),
        "is_self": subject.pk == request.user.pk,
        "sees_gold": bool(viewer_roles & {ADJUDICATOR, ADMIN}),
        "works": ANNOTATOR in viewer_roles and subject.pk == request.user.pk,
    }
    return context, query


@require_GET
@require_role(*ROLES)
def profile_detail(request: HttpRequest, username: str) -> HttpResponse:
    context, query = _profile_context(request, username)
    if context is None:
        return refused_query(request, query)
    if request.htmx and request.htmx.target == "digest":
        return render(request, "profiles/_digest.html", context)
    return render(request, "profiles/profile.html", context)


@require_GET
@require_role(*ROLES)
def profile_csv(request: HttpRequest, username: str) -> HttpResponse:
    """The per-slot table: each figure's k, n, share and interval, and the pooled row."""
    subject = _subject(request, username)
    query = _query(request)
    if query.errors:
        return refused_query(request, query, csv=True)
    scope = query.cleaned_data["scope"]
    header, rows = slot_table(profile_of(user=subject, scope=scope))
    suffix = f"-{scope.chosen.name}" if scope.chosen else ""
    return csv_response(f"profile-{subject.get_username()}{suffix}.csv", header, rows)
