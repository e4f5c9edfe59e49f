"""Rule set versions through the API: list, detail (with the comparison on gold and, given
``?pass=``, on a parser's pass), propose, vote (adjudicators), activate (admins)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.rule_revisions.services import (
    as_json,
    blocker,
    pass_names,
    revision_activate,
    revision_comparison,
    revision_propose,
    revision_vote,
)
from annotator.api_fields import Flag, Text
from annotator.roles import ADJUDICATOR, ADMIN, HasRole
from nsmcore.mapper import RuleSetError
from rules.models import RuleSetActivation, RuleSetVersion
from rules.rulesets import VERSION_NAME, ensure_initial_version

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR, ADMIN, message=gettext_lazy("rule revisions are for adjudicators and admins")
)
IsAdjudicator = HasRole(ADJUDICATOR, message=gettext_lazy("only adjudicators vote on rule revisions"))
IsAdmin = HasRole(ADMIN, message=gettext_lazy("only admins activate a version at once; adjudicators vote"))


class VersionOut(serializers.ModelSerializer):
    # the packaged version that seeds a database has neither
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    parent = serializers.CharField(source="parent.version", default=None, allow_null=True)
    suite_ok = serializers.BooleanField()

    class Meta:
        model = RuleSetVersion
        fields = [
            "version",
            "status",
            "content_hash",
            "parent",
            "note",
            "created_by",
            "created_at",
            "suite_ok",
        ]


class ProposeIn(serializers.Serializer):
    document = serializers.JSONField(help_text="the rule set, in the v1.json format")
    version = serializers.RegexField(
        VERSION_NAME, required=False, allow_blank=True, max_length=32, default="",
        trim_whitespace=False, help_text="empty: the next number",
    )  # fmt: skip
    note = Text(required=False, allow_blank=True, max_length=5000, default="")
    pilot_item_set = Text(required=False, allow_blank=True, max_length=100, default="")


class VoteIn(serializers.Serializer):
    approve = Flag()
    comment = Text(required=False, allow_blank=True, max_length=2000, default="")


def _problem(message: str) -> Response:
    return Response({"detail": message}, status=status.HTTP_400_BAD_REQUEST)


def _detail(version: RuleSetVersion, parser: str = "") -> dict[str, Any]:
    return {
        **VersionOut(version).data,
        "document": version.document,
        "report": version.report,
        "can_activate": not blocker(version),
        "blocker": blocker(version),
        "votes": [
            {"adjudicator": v.adjudicator.username, "approve": v.approve, "comment": v.comment}
            for v in version.votes.filter(ballot=version.ballot).select_related("adjudicator")
        ],
        "comparison": as_json(revision_comparison(version=version, parser=parser)),
    }


class RuleSetList(APIView):
    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]

    @extend_schema(responses={200: VersionOut(many=True)})
    def get(self, request: Request) -> Response:
        rows = RuleSetVersion.objects.select_related("created_by", "parent")
        return Response(VersionOut(rows, many=True).data)

    @extend_schema(
        request=ProposeIn,
        responses={
            201: OpenApiTypes.OBJECT,
            409: OpenApiResponse(description="a version of that name, or with these rules, is stored"),
        },
    )
    def post(self, request: Request) -> Response:
        data = ProposeIn(data=request.data)
        if not data.is_valid():
            return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
        try:
            version = revision_propose(user=request.user, **data.validated_data)
        except RuleSetError as error:  # the library's (nsmcore knows no HTTP): a bad rule document
            return _problem(str(error))
        return Response(_detail(version), status=status.HTTP_201_CREATED)


class _VersionView(APIView):
    def version(self, name: str) -> RuleSetVersion:
        if self.request.method == "POST":  # a flushed database records its packaged version first
            ensure_initial_version()
        return get_object_or_404(RuleSetVersion.objects.select_related("created_by", "parent"), version=name)


class RuleSetDetail(_VersionView):
    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]

    @extend_schema(
        parameters=[OpenApiParameter("pass", str, description="a parser whose pass to compare on")],
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(description="pass: no parser of that name has predictions"),
        },
    )
    def get(self, request: Request, version: str) -> Response:
        row = self.version(version)
        parser = request.query_params.get("pass", "")
        if parser and parser not in (passes := pass_names()):
            return _problem(
                _("pass: no parser %(parser)s has predictions; passes: %(passes)s")
                % {"parser": repr(parser), "passes": ", ".join(passes)}
            )
        return Response(_detail(row, parser))


class RuleSetVoteView(_VersionView):
    permission_classes = [IsAuthenticated & IsAdjudicator]

    @extend_schema(
        request=VoteIn,
        responses={
            200: VersionOut,
            409: OpenApiResponse(description="the version is no longer proposed, or you have voted on it"),
        },
    )
    def post(self, request: Request, version: str) -> Response:
        row = self.version(version)
        data = VoteIn(data=request.data)
        if not data.is_valid():
            return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
        row = revision_vote(user=request.user, version=row, **data.validated_data)
        return Response(VersionOut(row).data)


class RuleSetActivate(_VersionView):
    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(
        request=None,
        responses={
            200: OpenApiTypes.OBJECT,
            409: OpenApiResponse(
                description="the version cannot be activated now (already active, or failing its suite)"
            ),
        },
    )
    def post(self, request: Request, version: str) -> Response:
        row = self.version(version)
        activation = revision_activate(user=request.user, version=row, how=RuleSetActivation.How.ADMIN)
        return Response(
            {
                "version": row.version,
                "status": "active",
                "rerouted": activation.rerouted,
                "changed": activation.changed,
            }
        )
