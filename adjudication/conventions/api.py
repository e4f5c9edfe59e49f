"""Conventions through the API, for scripts: list, propose, read with votes and the preview of
what applying would change, vote, apply, withdraw, revise. The services are the pages'
(``adjudication.gold.services``); adjudicators and admins read, only adjudicators act
(adjudication.api_common has the rules shared with the gold API)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from adjudication.agreement.analysis import item_texts, round_analysis
from adjudication.api_common import (
    ID_RANGE,
    REVISION_MISSING,
    RULE_MISSING,
    ReadsForAdjudicatorsAndAdmins,
    RoundRef,
    _errors,
    _invalid,
    _View,
    _written,
)
from adjudication.conventions.filters import ConventionFilter
from adjudication.gold.selectors import gold_awaiting
from adjudication.gold.services import (
    PREVIEW_SIZE,
    acceptance_rule,
    convention_apply,
    convention_matches,
    convention_propose,
    convention_revise,
    convention_vote,
    convention_withdraw,
)
from adjudication.models import Convention
from annotator.api_fields import Flag, Text
from annotator.models import Round
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES


class ConventionVoteOut(serializers.Serializer):
    adjudicator = serializers.CharField(source="adjudicator.username")
    approve = serializers.BooleanField()
    comment = serializers.CharField()
    created_at = serializers.DateTimeField()


class ConventionOut(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField(help_text="shared by the convention's versions")
    version = serializers.IntegerField()
    label = serializers.CharField(help_text="C<number> v<version>")
    round = serializers.IntegerField(source="round_id")
    round_name = serializers.CharField(source="round.name")
    slot = serializers.ChoiceField(choices=list(SLOT_NAMES))
    value_a = serializers.CharField()
    value_b = serializers.CharField()
    chosen = serializers.CharField(help_text="the value the slot takes: value_a or value_b")
    rule = serializers.CharField(help_text="the convention in words, as the guidelines read it")
    status = serializers.ChoiceField(choices=Convention.Status.choices)
    source = serializers.DictField(child=serializers.CharField(), help_text="where it was proposed from")
    proposer = serializers.CharField(source="proposer.username")
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    applied_at = serializers.DateTimeField(allow_null=True)
    votes = serializers.SerializerMethodField()

    @extend_schema_field(ConventionVoteOut(many=True))
    def get_votes(self, convention: Convention) -> list[dict[str, Any]]:
        votes = sorted(convention.votes.all(), key=lambda v: (v.created_at, v.pk))
        return ConventionVoteOut(votes, many=True).data


class ConventionVersionRef(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Convention.Status.choices)


class AcceptanceOut(serializers.Serializer):
    quorum = serializers.IntegerField(help_text="votes needed before a convention is decided")
    majority = serializers.FloatField(help_text="accepted when more than this share approve")


class MatchOut(serializers.Serializer):
    gold_id = serializers.IntegerField()
    item_id = serializers.IntegerField()
    source_id = serializers.CharField()
    text = serializers.CharField(help_text="the item's text as the round shows it")
    values = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        help_text="each coder's value on the slot, in the order of coders ('' where none)",
    )


class MatchPreviewOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="open gold records the convention would settle")
    more = serializers.IntegerField(help_text="matches beyond those listed")
    awaiting = serializers.IntegerField(
        help_text="items whose gold record is not opened yet (POST .../gold/open/), so not counted"
    )
    coders = serializers.ListField(child=serializers.CharField())
    matches = MatchOut(many=True)


class ConventionDetailOut(ConventionOut):
    versions = serializers.SerializerMethodField()
    acceptance = serializers.SerializerMethodField()
    preview = serializers.SerializerMethodField(
        help_text="what applying it would change; null unless proposed or accepted"
    )

    @extend_schema_field(ConventionVersionRef(many=True))
    def get_versions(self, convention: Convention) -> list[dict[str, Any]]:
        rows = Convention.objects.filter(number=convention.number).order_by("-version")
        return ConventionVersionRef(rows, many=True).data

    @extend_schema_field(AcceptanceOut)
    def get_acceptance(self, convention: Convention) -> dict[str, Any]:
        quorum, majority = acceptance_rule()
        return AcceptanceOut({"quorum": quorum, "majority": majority}).data

    @extend_schema_field(MatchPreviewOut(allow_null=True))
    def get_preview(self, convention: Convention) -> dict[str, Any] | None:
        if convention.status not in (Convention.Status.PROPOSED, Convention.Status.ACCEPTED):
            return None
        matches = convention_matches(convention)  # reads only: records not yet opened are not in it
        shown = matches[:PREVIEW_SIZE]
        texts = item_texts(item_ids=[m.item_id for m in shown], text_field=convention.round.text_field)
        doc = {
            "count": len(matches),
            "more": len(matches) - len(shown),
            "awaiting": gold_awaiting(convention.round),
            "coders": round_analysis(convention.round).data.coder_names,
            "matches": [{**asdict(m), "text": texts.get(m.item_id, "")} for m in shown],
        }
        return MatchPreviewOut(doc).data


def _conventions() -> QuerySet[Convention]:
    return Convention.objects.select_related("proposer", "round").prefetch_related("votes__adjudicator")


def _convention(convention_id: int) -> Convention:
    return get_object_or_404(_conventions(), pk=convention_id)


class ConventionProposeIn(serializers.Serializer):
    """The page's proposal form: a dispute on one slot between two of its values, the value the
    slot takes, and the convention in words."""

    round = RoundRef(queryset=Round.objects.all())
    slot = serializers.ChoiceField(choices=list(SLOT_NAMES))
    value_a = Text(max_length=32)
    value_b = Text(max_length=32)
    chosen = Text(max_length=32, help_text="value_a or value_b")
    rule = Text(max_length=5000, help_text="the convention in words", **_written(RULE_MISSING))
    from_ = serializers.ChoiceField(choices=["flow", "conflict"], required=False)
    item = Text(required=False, allow_blank=True, max_length=64, help_text="the item it was proposed from")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")  # a keyword in Python, a field name in the form
        return fields

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        allowed = SLOT_BY_NAME[data["slot"]].values
        problems = {
            name: _("%(value)s is not a value of %(slot)s; allowed: %(allowed)s")
            % {"value": data[name], "slot": data["slot"], "allowed": ", ".join(allowed)}
            for name in ("value_a", "value_b", "chosen")
            if data[name] not in allowed
        }
        if not problems and data["value_a"] == data["value_b"]:
            problems["value_b"] = _("a convention settles a dispute between two different values")
        if not problems and data["chosen"] not in (data["value_a"], data["value_b"]):
            problems["chosen"] = _("the chosen value must be %(a)s or %(b)s") % {
                "a": data["value_a"],
                "b": data["value_b"],
            }
        if problems:
            raise serializers.ValidationError(problems)
        return data


class ConventionList(generics.ListAPIView):
    """Every convention, every version (filter by round, status, slot); POST proposes one."""

    permission_classes = [IsAuthenticated, ReadsForAdjudicatorsAndAdmins]
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)
    serializer_class = ConventionOut
    filterset_class = ConventionFilter

    def get_queryset(self) -> QuerySet[Convention]:
        return _conventions()

    @extend_schema(
        parameters=[OpenApiParameter("round", {"type": "integer", **ID_RANGE}, description="a round's id")],
        responses={200: ConventionOut(many=True), **_errors(400, 401, 403, 404)},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=ConventionProposeIn, responses={201: ConventionDetailOut, **_errors(400, 401, 403, 409)}
    )
    def post(self, request: Request) -> Response:
        data = ConventionProposeIn(data=request.data)
        if not data.is_valid():
            return _invalid(data)
        v = data.validated_data
        source = {k: v[k] for k in ("from", "item") if v.get(k)}
        convention = convention_propose(
            user=request.user, round_=v["round"], slot=v["slot"], value_a=v["value_a"],
            value_b=v["value_b"], chosen=v["chosen"], rule=v["rule"], source=source,
        )  # fmt: skip
        return Response(ConventionDetailOut(_convention(convention.pk)).data, status=status.HTTP_201_CREATED)


class ConventionDetail(_View):
    @extend_schema(responses={200: ConventionDetailOut, **_errors(401, 403, 404)})
    def get(self, request: Request, convention_id: int) -> Response:
        return Response(ConventionDetailOut(_convention(convention_id)).data)


class ConventionVoteIn(serializers.Serializer):
    approve = Flag()
    comment = Text(required=False, allow_blank=True, max_length=2000, default="")


class ConventionVote(_View):
    @extend_schema(
        request=ConventionVoteIn, responses={200: ConventionOut, **_errors(400, 401, 403, 404, 409)}
    )
    def post(self, request: Request, convention_id: int) -> Response:
        convention = _convention(convention_id)
        data = ConventionVoteIn(data=request.data)
        if not data.is_valid():
            return _invalid(data)
        convention_vote(user=request.user, convention=convention, **data.validated_data)
        return Response(ConventionOut(_convention(convention_id)).data)


class AppliedOut(serializers.Serializer):
    changed = serializers.IntegerField(help_text="gold records whose slot the convention set")
    convention = ConventionOut()


class ConventionApply(_View):
    @extend_schema(request=None, responses={200: AppliedOut, **_errors(401, 403, 404, 409)})
    def post(self, request: Request, convention_id: int) -> Response:
        convention = _convention(convention_id)
        changed = convention_apply(user=request.user, convention=convention)
        return Response(AppliedOut({"changed": changed, "convention": _convention(convention_id)}).data)


class ConventionWithdraw(_View):
    @extend_schema(request=None, responses={200: ConventionOut, **_errors(401, 403, 404, 409)})
    def post(self, request: Request, convention_id: int) -> Response:
        convention = _convention(convention_id)
        if convention.proposer_id != request.user.pk:
            return Response(
                {"detail": _("only the proposer can withdraw a convention")}, status=status.HTTP_403_FORBIDDEN
            )
        convention_withdraw(user=request.user, convention=convention)
        return Response(ConventionOut(_convention(convention_id)).data)


class ConventionReviseIn(serializers.Serializer):
    """The page's revise form: which of the two disputed values the slot now takes, and why."""

    chosen = Text(max_length=32, help_text="value_a or value_b of the convention")
    rule = Text(max_length=5000, help_text="the revised convention in words", **_written(REVISION_MISSING))

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        convention = self.context["convention"]
        pair = (convention.value_a, convention.value_b)
        problems = {}
        if data["chosen"] not in pair:
            problems["chosen"] = _("%(value)s is not one of the disputed values (%(a)s or %(b)s)") % {
                "value": data["chosen"],
                "a": pair[0],
                "b": pair[1],
            }
        if problems:
            raise serializers.ValidationError(problems)
        return data


class ConventionRevise(_View):
    @extend_schema(
        request=ConventionReviseIn,
        responses={201: ConventionDetailOut, **_errors(400, 401, 403, 404, 409)},
        description="A new version, to be voted on; the gold its earlier versions set is marked for "
        "review at once.",
    )
    def post(self, request: Request, convention_id: int) -> Response:
        convention = _convention(convention_id)
        data = ConventionReviseIn(data=request.data, context={"convention": convention})
        if not data.is_valid():
            return _invalid(data)
        revision = convention_revise(user=request.user, convention=convention, **data.validated_data)
        return Response(ConventionDetailOut(_convention(revision.pk)).data, status=status.HTTP_201_CREATED)
