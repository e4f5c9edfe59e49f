"""Conventions and gold through the API, for scripts: the services the pages call
(``adjudication.gold``), the checks their forms make, the roles they allow: adjudicators and
admins read (and open gold records), only adjudicators propose, vote, apply, revise, withdraw and
resolve.

A refused step is a 400 when the values asked for are wrong (each named by its field) and a 409
when the state of a record forbids it now (``AdjudicationConflict``: a convention already decided,
a vote already cast, a gold record changed since it was read); either way nothing is written.
Bodies are JSON only, and typed strictly: ``12`` is not a string, ``"true"`` not a boolean, so
what the schema says a field takes is what it takes."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.core.validators import RegexValidator
from django.db.models import Count, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import JSONParser
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.analytics import item_texts, round_analysis
from adjudication.audit import gold_audit_trail
from adjudication.filters import REVIEW, ConventionFilter, GoldFilter
from adjudication.gold import (
    ADJUDICATED,
    CONVENTION,
    UNANIMOUS,
    AdjudicationConflict,
    AdjudicationError,
    StaleGold,
    acceptance_rule,
    convention_apply,
    convention_matches,
    convention_propose,
    convention_revise,
    convention_vote,
    convention_withdraw,
    gold_resolve,
    gold_sync,
    gold_version,
)
from adjudication.gold_preview import GoldPreview, gold_preview
from adjudication.gold_selectors import gold_awaiting
from adjudication.models import Convention, GoldConstrual, GoldItem
from annotator.models import Annotation, Round
from annotator.roles import ADJUDICATOR, ADMIN, user_roles
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS

ID_RANGE = {"minimum": -(2**63), "maximum": 2**63 - 1}  # what a database column holds (IdFilter)
PREVIEW_SIZE = 200  # the convention page's list; the count covers every match

# Permissions ---------------------------------------------------------------------------------------


class ReadsForAdjudicatorsAndAdmins(BasePermission):
    """Reads for adjudicators and admins, writes for adjudicators only, as on the pages."""

    def has_permission(self, request: Request, view: Any) -> bool:
        roles = user_roles(request.user)
        if request.method in SAFE_METHODS:
            self.message = "conventions and gold are for adjudicators and admins"
            return bool(roles & {ADJUDICATOR, ADMIN})
        self.message = "only adjudicators propose, vote, apply, revise, withdraw and resolve"
        return ADJUDICATOR in roles


class AdjudicatorsAndAdmins(BasePermission):
    message = "conventions and gold are for adjudicators and admins"

    def has_permission(self, request: Request, view: Any) -> bool:
        return bool(user_roles(request.user) & {ADJUDICATOR, ADMIN})


class _View(APIView):
    permission_classes = [IsAuthenticated, ReadsForAdjudicatorsAndAdmins]
    parser_classes = [JSONParser]


# Strict input fields: JSON's types as the schema states them ---------------------------------------


def _printable(text: str) -> str:
    """Text safe to echo in a JSON answer: a lone surrogate cannot be encoded as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ascii(text)[1:-1]
    return text


# the forms' and the services' wording, so that a script reads what a person would
RULE_MISSING = "write the convention in words: it joins the guidelines"
REVISION_MISSING = "write the revised convention in words"
WHY_MISSING = "say why the item is resolved this way (it goes into the audit trail)"


def _written(message: str) -> dict[str, Any]:
    """A required text: ``message`` when it is absent or blank (whitespace is trimmed first). The
    validator never fails after that; it puts the rule in the schema (``pattern``), so that a
    client, or a fuzzer, knows that spaces alone are no text."""
    return {
        "error_messages": {"required": message, "blank": message},
        "validators": [RegexValidator(r"\S", message=message)],
    }


class Text(serializers.CharField):
    """A JSON string and nothing else (DRF's CharField would take 12 as "12"); a lone surrogate is
    refused by name, since no database stores it."""

    default_error_messages = {"surrogate": "contains a lone surrogate, not text"}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        if _printable(data) != data:
            self.fail("surrogate")
        return super().to_internal_value(data)


class Flag(serializers.BooleanField):
    """true or false, not "yes", 1 or "true"."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class Whole(serializers.IntegerField):
    """A JSON integer, not "12", 12.0 or true."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class RoundRef(serializers.PrimaryKeyRelatedField):
    def to_internal_value(self, data: Any) -> Round:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(data)


def _slot_map_schema(*, nullable: bool) -> dict[str, Any]:
    def value(slot: Any) -> dict[str, Any]:
        if nullable:
            return {"type": "string", "enum": [*slot.values, None], "nullable": True}
        return {"type": "string", "enum": list(slot.values)}

    schema: dict[str, Any] = {
        "type": "object",
        "properties": {slot.name: value(slot) for slot in SLOTS},
        "additionalProperties": False,
    }
    if nullable:
        schema["required"] = list(SLOT_NAMES)
    return schema


@extend_schema_field(_slot_map_schema(nullable=False))
class SlotValues(serializers.Field):
    """Values for some of the twelve slots: ``{"agency": "i"}``. An unknown slot or a value
    outside its slot's set is refused by name, with the allowed values (the page form's check)."""

    def to_internal_value(self, data: Any) -> dict[str, str]:
        if not isinstance(data, dict):
            raise serializers.ValidationError('expected an object of slot values: {"agency": "i"}')
        problems: dict[str, str] = {}
        for name, value in data.items():
            slot = SLOT_BY_NAME.get(name)
            if slot is None:
                problems[_printable(name)] = f"unknown slot; slots: {', '.join(SLOT_NAMES)}"
            elif not isinstance(value, str) or value not in slot.values:
                shown = _printable(value) if isinstance(value, str) else value
                problems[name] = f"{shown!r} is not an allowed value; allowed: {', '.join(slot.values)}"
        if problems:
            raise serializers.ValidationError(problems)
        return dict(data)

    def to_representation(self, value: dict[str, str]) -> dict[str, str]:
        return value


@extend_schema_field(_slot_map_schema(nullable=True))
class SlotsOut(serializers.Field):
    """The twelve slots of a construal or an annotation; null while unresolved."""

    def to_representation(self, value: dict[str, str | None]) -> dict[str, str | None]:
        return {name: value.get(name) for name in SLOT_NAMES}


# Answers -------------------------------------------------------------------------------------------


class Detail(serializers.Serializer):
    detail = serializers.CharField()


class StaleOut(serializers.Serializer):
    detail = serializers.CharField()
    current_version = serializers.IntegerField(required=False, help_text="when the record changed")


BAD = OpenApiResponse(
    OpenApiTypes.OBJECT,
    description="bad values, each named by its field ({field: [messages]}), or {detail: message}; "
    "nothing written",
)
UNAUTHENTICATED = OpenApiResponse(Detail, description="not logged in, or no valid token")
FORBIDDEN = OpenApiResponse(Detail, description="not logged in (session), or not this role")
MISSING = OpenApiResponse(Detail, description="no such record, or no such page")
CONFLICT = OpenApiResponse(Detail, description="the record's state forbids it now; nothing written")


def _errors(*codes: int) -> dict[int, OpenApiResponse]:
    known = {400: BAD, 401: UNAUTHENTICATED, 403: FORBIDDEN, 404: MISSING, 409: CONFLICT}
    return {code: known[code] for code in codes}


def _refused(error: AdjudicationError) -> Response:
    code = (
        status.HTTP_409_CONFLICT if isinstance(error, AdjudicationConflict) else status.HTTP_400_BAD_REQUEST
    )
    return Response({"detail": str(error)}, status=code)


def _invalid(data: serializers.Serializer) -> Response:
    return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)


# Conventions ---------------------------------------------------------------------------------------


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
            name: f"{data[name]} is not a value of {data['slot']}; allowed: {', '.join(allowed)}"
            for name in ("value_a", "value_b", "chosen")
            if data[name] not in allowed
        }
        if not problems and data["value_a"] == data["value_b"]:
            problems["value_b"] = "a convention settles a dispute between two different values"
        if not problems and data["chosen"] not in (data["value_a"], data["value_b"]):
            problems["chosen"] = f"the chosen value must be {data['value_a']} or {data['value_b']}"
        if problems:
            raise serializers.ValidationError(problems)
        return data


class ConventionList(generics.ListAPIView):
    """Every convention, every version (filter by round, status, slot); POST proposes one."""

    permission_classes = [IsAuthenticated, ReadsForAdjudicatorsAndAdmins]
    parser_classes = [JSONParser]
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
        try:
            convention = convention_propose(
                user=request.user, round_=v["round"], slot=v["slot"], value_a=v["value_a"],
                value_b=v["value_b"], chosen=v["chosen"], rule=v["rule"], source=source,
            )  # fmt: skip
        except AdjudicationError as error:
            return _refused(error)
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
        try:
            convention_vote(user=request.user, convention=convention, **data.validated_data)
        except AdjudicationError as error:
            return _refused(error)
        return Response(ConventionOut(_convention(convention_id)).data)


class AppliedOut(serializers.Serializer):
    changed = serializers.IntegerField(help_text="gold records whose slot the convention set")
    convention = ConventionOut()


class ConventionApply(_View):
    @extend_schema(request=None, responses={200: AppliedOut, **_errors(401, 403, 404, 409)})
    def post(self, request: Request, convention_id: int) -> Response:
        convention = _convention(convention_id)
        try:
            changed = convention_apply(user=request.user, convention=convention)
        except AdjudicationError as error:
            return _refused(error)
        return Response(AppliedOut({"changed": changed, "convention": _convention(convention_id)}).data)


class ConventionWithdraw(_View):
    @extend_schema(request=None, responses={200: ConventionOut, **_errors(401, 403, 404, 409)})
    def post(self, request: Request, convention_id: int) -> Response:
        convention = _convention(convention_id)
        if convention.proposer_id != request.user.pk:
            return Response(
                {"detail": "only the proposer can withdraw a convention"}, status=status.HTTP_403_FORBIDDEN
            )
        try:
            convention_withdraw(user=request.user, convention=convention)
        except AdjudicationError as error:
            return _refused(error)
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
            problems["chosen"] = f"{data['chosen']} is not one of the disputed values ({' or '.join(pair)})"
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
        try:
            revision = convention_revise(user=request.user, convention=convention, **data.validated_data)
        except AdjudicationError as error:
            return _refused(error)
        return Response(ConventionDetailOut(_convention(revision.pk)).data, status=status.HTTP_201_CREATED)


# Gold ----------------------------------------------------------------------------------------------


class ProvenanceOut(serializers.Serializer):
    source = serializers.ChoiceField(choices=[UNANIMOUS, CONVENTION, ADJUDICATED])
    convention = serializers.IntegerField(required=False, help_text="its number, when set by one")
    version = serializers.IntegerField(required=False, help_text="the convention's version")
    by = serializers.CharField(required=False, help_text="who applied or chose it")


class ConstrualOut(serializers.ModelSerializer):
    slots = SlotsOut()
    provenance = serializers.DictField(child=ProvenanceOut(), help_text="slot -> how it was set")
    rule = serializers.IntegerField(allow_null=True, help_text="the rule that routed it")
    fired = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = GoldConstrual
        fields = ["index", "slots", "provenance", "residue", "notes", "label", "rule", "fired",
                  "abstention", "rule_set_version"]  # fmt: skip


class GoldOut(serializers.Serializer):
    item_id = serializers.IntegerField()
    source_id = serializers.CharField(source="item.source_id")
    round = serializers.IntegerField(source="round_id")
    status = serializers.ChoiceField(choices=GoldItem.Status.choices)
    needs_review = serializers.BooleanField()
    review_reason = serializers.CharField()
    pivotal_slots = serializers.ListField(child=serializers.CharField())
    updated_at = serializers.DateTimeField()
    version = serializers.SerializerMethodField(
        help_text="changes in its audit trail: send it back as base_version when resolving"
    )
    sources = serializers.SerializerMethodField(help_text="how its slots were set")
    construals = ConstrualOut(many=True, source="construals.all")

    def get_version(self, gold: GoldItem) -> int:
        counted = getattr(gold, "changes_count", None)
        return counted if counted is not None else gold_version(gold)

    def get_sources(self, gold: GoldItem) -> list[str]:
        return sorted({p.get("source") for c in gold.construals.all() for p in c.provenance.values()})


class LineOut(serializers.Serializer):
    slot = serializers.CharField()
    value = serializers.CharField()
    text = serializers.CharField()


class RoutingOut(serializers.Serializer):
    label = serializers.CharField()
    rule = serializers.IntegerField(source="rule_index", allow_null=True)
    fired = serializers.ListField(child=serializers.CharField())
    abstention = serializers.CharField(source="abstention_type", allow_null=True)
    rule_set_version = serializers.CharField()


class ConstrualPreviewOut(serializers.Serializer):
    index = serializers.IntegerField()
    lines = LineOut(many=True)
    routing = RoutingOut(allow_null=True, help_text="null while a slot is unresolved")
    unresolved = serializers.ListField(child=serializers.CharField())
    pivotal = serializers.ListField(child=serializers.CharField())


class GoldPreviewOut(serializers.Serializer):
    construals = ConstrualPreviewOut(many=True)
    same_label = serializers.CharField(
        allow_null=True, help_text="the label both construals route to, when they route to the same"
    )
    pivotal = serializers.ListField(child=serializers.CharField())


class GoldAnnotationOut(serializers.Serializer):
    annotator = serializers.CharField(source="assignment.annotator.username")
    slots = SlotsOut()
    residue = serializers.CharField()
    notes = serializers.CharField()


class ChangeOut(serializers.Serializer):
    at = serializers.DateTimeField()
    who = serializers.CharField()
    kind = serializers.CharField(help_text="opened, convention, adjudicated or rule-set")
    why = serializers.CharField()
    diffs = serializers.SerializerMethodField()
    unresolved = serializers.ListField(child=serializers.CharField())

    def get_diffs(self, entry: Any) -> list[str]:
        return [d.text for d in entry.diffs]


class GoldDetailOut(GoldOut):
    text = serializers.SerializerMethodField()
    annotations = serializers.SerializerMethodField()
    preview = serializers.SerializerMethodField()
    changes = serializers.SerializerMethodField(help_text="the audit trail, newest first")

    def get_text(self, gold: GoldItem) -> str:
        return gold.item.text_for(gold.round.text_field)

    @extend_schema_field(GoldAnnotationOut(many=True))
    def get_annotations(self, gold: GoldItem) -> list[dict[str, Any]]:
        rows = (
            Annotation.objects.filter(
                assignment__round_id=gold.round_id,
                assignment__item_id=gold.item_id,
                assignment__status="done",
            )
            .select_related("assignment__annotator")
            .order_by("assignment__annotator__username")
        )
        return GoldAnnotationOut(rows, many=True).data

    @extend_schema_field(GoldPreviewOut)
    def get_preview(self, gold: GoldItem) -> dict[str, Any]:
        construals = list(gold.construals.all())
        first, second = construals[0], (construals[1] if len(construals) > 1 else None)
        return _preview_doc(
            gold_preview(first=first.slots, second=second.slots if second else None, residue=first.residue)
        )

    @extend_schema_field(ChangeOut(many=True))
    def get_changes(self, gold: GoldItem) -> list[dict[str, Any]]:
        return ChangeOut(gold_audit_trail(gold), many=True).data


def _preview_doc(preview: GoldPreview) -> dict[str, Any]:
    return GoldPreviewOut(
        {"construals": preview.construals, "same_label": preview.same_label, "pivotal": preview.pivotal}
    ).data


def _gold(round_id: int, item_id: int) -> GoldItem:
    if not all(ID_RANGE["minimum"] <= i <= ID_RANGE["maximum"] for i in (round_id, item_id)):
        # Django spares a primary key lookup this, not a foreign key's: SQLite would overflow (500)
        raise Http404("no gold record has these ids")
    rows = GoldItem.objects.select_related("item", "round").prefetch_related("construals")
    rows = rows.annotate(changes_count=Count("changes", distinct=True))
    return get_object_or_404(rows, round_id=round_id, item_id=item_id)


class GoldPageOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="records matching the filters")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    total = serializers.IntegerField(help_text="the round's gold records")
    resolved = serializers.IntegerField()
    awaiting = serializers.IntegerField(help_text="items ready for a record not opened yet")
    results = GoldOut(many=True)


class GoldList(_View):
    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=["open", "resolved", REVIEW]),
            OpenApiParameter("label", str, description="the first construal's routed label"),
            OpenApiParameter(
                "source",
                str,
                enum=[UNANIMOUS, CONVENTION, ADJUDICATED],
                description="provenance: any slot set this way",
            ),
            OpenApiParameter("page", int),
        ],
        operation_id="rounds_gold_list",
        responses={200: GoldPageOut, **_errors(400, 401, 403, 404)},
        description="The round's gold records, 50 a page, by item; a GET opens none (see awaiting).",
    )
    def get(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        rows = GoldItem.objects.filter(round=round_)
        filters = GoldFilter(request.query_params, queryset=rows)
        if not filters.is_valid():
            problems = {name: list(messages) for name, messages in filters.errors.items()}
            return Response(problems, status=status.HTTP_400_BAD_REQUEST)
        shown = (
            filters.qs.select_related("item")
            .prefetch_related("construals")
            .annotate(changes_count=Count("changes", distinct=True))
            .order_by("item__source_id", "pk")
        )
        pages = PageNumberPagination()
        page = pages.paginate_queryset(shown, request, view=self)
        doc = {
            "count": pages.page.paginator.count,
            "next": pages.get_next_link(),
            "previous": pages.get_previous_link(),
            "total": rows.count(),
            "resolved": rows.filter(status=GoldItem.Status.RESOLVED).count(),
            "awaiting": gold_awaiting(round_),
            "results": page,
        }
        return Response(GoldPageOut(doc).data)


class OpenedOut(serializers.Serializer):
    opened = serializers.IntegerField(help_text="gold records opened now")
    awaiting = serializers.IntegerField(help_text="items still waiting (their annotations are not all in)")


class GoldOpen(_View):
    permission_classes = [IsAuthenticated, AdjudicatorsAndAdmins]

    @extend_schema(
        request=None,
        responses={200: OpenedOut, **_errors(401, 403, 404)},
        description="Open a gold record for every item whose annotations are all in (the gold pages' "
        "button): unanimous slots filled, an item whose slots all agree resolved at once.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        opened = gold_sync(round_)
        return Response(OpenedOut({"opened": opened, "awaiting": gold_awaiting(round_)}).data)


class GoldDetail(_View):
    @extend_schema(
        operation_id="rounds_gold_item_retrieve", responses={200: GoldDetailOut, **_errors(401, 403, 404)}
    )
    def get(self, request: Request, round_id: int, item_id: int) -> Response:
        return Response(GoldDetailOut(_gold(round_id, item_id)).data)


class GoldPreviewIn(serializers.Serializer):
    values = SlotValues(required=False, default=dict, help_text="slots of the first construal to set")
    second = SlotValues(
        required=False,
        allow_null=True,
        default=None,
        help_text="keep a second construal: the slots where it differs from the first; "
        "null or absent: one construal (a second one stored is dropped)",
    )


class GoldResolveIn(GoldPreviewIn):
    why = Text(max_length=5000, help_text="it goes into the audit trail", **_written(WHY_MISSING))
    base_version = Whole(
        min_value=0, max_value=2**31 - 1, help_text="the record's version you decided on (GET gives it)"
    )


class GoldPreviewView(_View):
    @extend_schema(
        request=GoldPreviewIn,
        responses={200: GoldPreviewOut, **_errors(400, 401, 403, 404)},
        description="The construals a resolution would give, rendered and routed, unsaved.",
    )
    def post(self, request: Request, round_id: int, item_id: int) -> Response:
        gold = _gold(round_id, item_id)
        data = GoldPreviewIn(data=request.data)
        if not data.is_valid():
            return _invalid(data)
        values, second = data.validated_data["values"], data.validated_data["second"]
        stored = gold.construals.all()[0]
        first = {**stored.slots, **values}
        try:
            preview = gold_preview(
                first=first,
                second={**first, **second} if second is not None else None,
                residue=stored.residue,
            )
        except AdjudicationError as error:
            return _refused(error)
        return Response(_preview_doc(preview))


def _resolution(v: dict[str, Any]) -> dict[str, Any]:
    return {"values": v["values"], "second": v["second"], "why": v["why"]}


class GoldResolve(_View):
    @extend_schema(
        request=GoldResolveIn,
        responses={
            200: GoldOut,
            **_errors(400, 401, 403, 404),
            409: OpenApiResponse(StaleOut, description="the record changed since base_version"),
        },
        description="Resolve an item by hand (every slot must end up set); the slots given are "
        "marked adjudicated by you.",
    )
    def post(self, request: Request, round_id: int, item_id: int) -> Response:
        gold = _gold(round_id, item_id)
        data = GoldResolveIn(data=request.data)
        if not data.is_valid():
            return _invalid(data)
        v = data.validated_data
        try:
            gold_resolve(user=request.user, gold=gold, base_version=v["base_version"], **_resolution(v))
        except StaleGold as stale:
            return Response(
                {"detail": str(stale), "current_version": stale.current}, status=status.HTTP_409_CONFLICT
            )
        except AdjudicationError as error:
            return _refused(error)
        return Response(GoldOut(_gold(round_id, item_id)).data)
