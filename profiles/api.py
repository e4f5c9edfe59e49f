"""Annotator profiles through the API: the list (``api/profiles/``) and one profile with a page of
its digest (``api/profiles/<username>/``), the pages' figures and permissions: adjudicators and
admins read every annotator's, anyone else with a role only their own (another's is a 404, as on
the page). ``?round=`` (a round's id) narrows to one round; ``?page=`` turns the digest's pages."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.forms import form_problems
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR, HasRole
from profiles.forms import PAGE_MAX, ProfileQuery
from profiles.selectors import (
    NotFound,
    Scope,
    profile_digest,
    profile_of,
    profile_subject,
    profile_users,
    profiles_of,
)

HasARole = HasRole(
    ANNOTATOR,
    ADJUDICATOR,
    ADMIN,
    message=gettext_lazy("profiles are for annotators, adjudicators and admins"),
)


class ProportionOut(serializers.Serializer):
    k = serializers.IntegerField()
    n = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True, help_text="k/n; null when n is 0")
    low = serializers.FloatField(allow_null=True, help_text="exact (Clopper-Pearson) 95% interval")
    high = serializers.FloatField(allow_null=True)


class SlotFiguresOut(serializers.Serializer):
    slot = serializers.CharField(help_text="a slot; empty for the twelve slots pooled")
    gold = ProportionOut(help_text="agreement with gold (construal 1)")
    kept = ProportionOut(help_text="prefilled values kept")
    control = ProportionOut(help_text="blind values equal to the parser's prediction (the control)")
    difference = serializers.FloatField(allow_null=True, help_text="kept minus control: anchoring")
    overturned = ProportionOut(help_text="kept prefilled values that gold overturned")


class TimeOut(serializers.Serializer):
    n = serializers.IntegerField(help_text="annotations with a recorded time")
    median_ms = serializers.FloatField(allow_null=True)
    p90_ms = serializers.FloatField(allow_null=True, help_text="nearest rank")


class FlowOut(serializers.Serializer):
    slot = serializers.CharField()
    annotator_value = serializers.CharField(source="a")
    gold_value = serializers.CharField(source="b")
    count = serializers.IntegerField()
    share_of_annotator_value = serializers.FloatField(source="share_of_a")


class PeriodOut(serializers.Serializer):
    start = serializers.DateField()
    days = serializers.IntegerField(help_text="1: a day; 7: a week from Monday")
    items = serializers.IntegerField(help_text="items first submitted in it")


class RoundRefOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    mode = serializers.CharField()


class ScopeOut(serializers.Serializer):
    round = RoundRefOut(source="chosen", allow_null=True, help_text="the round chosen; null: every round")
    rounds = RoundRefOut(many=True, help_text="the human rounds counted")
    silver_left_out = RoundRefOut(source="silver", many=True, help_text="silver passes, never counted")
    control_rounds = RoundRefOut(many=True, help_text="the blind rounds of the control")
    parser = serializers.CharField(help_text="the parser the blind values are compared with")


class ProfileSummaryOut(serializers.Serializer):
    username = serializers.CharField()
    submitted = serializers.IntegerField()
    with_gold = serializers.IntegerField()
    with_prefill = serializers.IntegerField()
    in_control = serializers.IntegerField(help_text="blind annotations in the control")
    control_source = serializers.CharField(help_text="own, team, or empty when there is no control")
    disagreements = serializers.IntegerField(help_text="annotations that differ from gold in some slot")
    overall = SlotFiguresOut(help_text="the twelve slots pooled")
    time = TimeOut()
    url = serializers.SerializerMethodField(help_text="the profile's page")

    def get_url(self, profile: Any) -> str:
        return reverse("profile", args=[profile.username])


class ProfileListOut(serializers.Serializer):
    scope = ScopeOut()
    annotators = ProfileSummaryOut(many=True)


class ConventionRefOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    label = serializers.CharField()
    rule = serializers.CharField()
    chosen = serializers.CharField()


class DigestSlotOut(serializers.Serializer):
    slot = serializers.CharField()
    theirs = serializers.CharField(help_text="the annotator's value")
    gold = serializers.CharField(help_text="gold's value (construal 1)")
    second = serializers.CharField(help_text="construal 2's value where gold kept two that differ here")
    source = serializers.CharField(help_text="unanimous, convention or adjudicated")
    why = serializers.CharField()
    who = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True)
    convention = ConventionRefOut(allow_null=True)


class DigestEntryOut(serializers.Serializer):
    item = serializers.IntegerField(source="item_id")
    source_id = serializers.CharField()
    round = serializers.IntegerField(source="round_id")
    round_name = serializers.CharField()
    assignment = serializers.IntegerField(source="assignment_id")
    decided_at = serializers.DateTimeField()
    slots = DigestSlotOut(many=True)


class DigestOut(serializers.Serializer):
    total = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    entries = DigestEntryOut(many=True)


class ProfileOut(ProfileSummaryOut):
    scope = ScopeOut()
    slots = SlotFiguresOut(many=True)
    flows = FlowOut(many=True, help_text="annotator value -> gold value where they differ, most first")
    throughput = PeriodOut(many=True)
    digest = DigestOut()


def profile_document(profile: Any, digest: Any) -> dict[str, Any]:
    """A profile with a page of its digest as the API (and the command's JSON) gives it."""
    return ProfileOut(SimpleNamespace(**vars(profile), digest=digest)).data


ROUND = OpenApiParameter(
    "round", {"type": "integer", "minimum": 1}, description="a round's id; left out, every human round"
)
BAD_QUERY = OpenApiResponse(description="a round that is none, or a silver pass; a page past the last")


class _View(APIView):
    permission_classes = [IsAuthenticated & HasARole]

    def scope_and_page(self, request: Request) -> tuple[Scope, int] | Response:
        query = ProfileQuery(request.query_params)
        if not query.is_valid():
            return Response({"detail": form_problems(query), **query.errors}, status=400)
        return query.cleaned_data["scope"], query.cleaned_data["page"]


class ProfileList(_View):
    @extend_schema(
        operation_id="profiles_list", parameters=[ROUND], responses={200: ProfileListOut, 400: BAD_QUERY}
    )
    def get(self, request: Request) -> Response:
        found = self.scope_and_page(request)
        if isinstance(found, Response):
            return found
        scope, _page = found
        rows = profiles_of(users=profile_users(viewer=request.user, scope=scope), scope=scope)
        return Response(ProfileListOut({"scope": scope, "annotators": rows}).data)


class ProfileDetail(_View):
    @extend_schema(
        operation_id="profiles_retrieve",
        parameters=[
            ROUND,
            OpenApiParameter(
                "page",
                {"type": "integer", "minimum": 1, "maximum": PAGE_MAX},
                description="the digest's page",
            ),
        ],
        responses={200: ProfileOut, 400: BAD_QUERY},
    )
    def get(self, request: Request, username: str) -> Response:
        try:
            subject = profile_subject(viewer=request.user, username=username)
        except NotFound:
            raise Http404 from None
        found = self.scope_and_page(request)
        if isinstance(found, Response):
            return found
        scope, page = found
        digest = profile_digest(user=subject, scope=scope, page=page)  # a page past the last: 400
        return Response(profile_document(profile_of(user=subject, scope=scope), digest))
