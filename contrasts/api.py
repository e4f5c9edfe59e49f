"""Minimal pairs through the API, for scripts: list and create sets, freeze one, open its next
version, list and add pairs, and every parser's scores. Adjudicators and admins read and write,
as on the pages. Bodies are JSON only and typed strictly (annotator.api_fields), an unknown field
is refused by name; a bad value is a 400 naming its field, a set whose state refuses the step
(frozen, already frozen, not the newest) a 409, and nothing is written either way."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from adjudication.api_common import SlotValues
from annotator.api_fields import Flag, Text, Whole, read_body
from annotator.filters import MAX_ID
from annotator.roles import ADJUDICATOR, ADMIN, HasRole
from contrasts.models import NAME_PATTERN, MinimalPair, PairSet
from contrasts.scoring import parser_choice, score_set, unknown_parser_message
from contrasts.selectors import pair_sets, set_pairs
from contrasts.services import (
    FAMILY_MAX,
    NOTE_MAX,
    TEXT_MAX,
    pair_add,
    pair_set_create,
    pair_set_freeze,
    pair_set_new_version,
)
from rules.rulesets import active_rule_set

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR, ADMIN, message=gettext_lazy("minimal pairs are for adjudicators and admins")
)


class _View(APIView):
    permission_classes = [IsAuthenticated, IsAdjudicatorOrAdmin]
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)


def _set(set_id: int) -> PairSet:
    return get_object_or_404(pair_sets(), pk=set_id)


# Answers ---------------------------------------------------------------------------------------


class PairSetOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    version = serializers.IntegerField()
    spec = serializers.CharField(help_text="NAME@vVERSION")
    open = serializers.BooleanField(source="is_open", help_text="pairs are added while it is open")
    pairs = serializers.IntegerField(source="pair_count")
    note = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    created_at = serializers.DateTimeField()
    frozen_at = serializers.DateTimeField(allow_null=True)
    frozen_by = serializers.CharField(source="frozen_by.username", default=None, allow_null=True)


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
        "description": "slot -> [from, to]",
    }
)
class TargetsOut(serializers.DictField):
    pass


class PairOut(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.IntegerField(source="item_id")
    source_id = serializers.CharField(source="item.source_id")
    item_text = serializers.CharField(source="item.text", help_text="x: the item's generated text")
    reference_label = serializers.CharField(source="item.reference_label", help_text="what x should route to")
    text = serializers.CharField(help_text="x': the rewritten text")
    family = serializers.CharField()
    targets = TargetsOut(help_text="slot -> [from, to]; empty for an invariance pair")
    invariance = serializers.BooleanField()
    expected = serializers.CharField(source="expected_label", help_text="what x' should route to")
    note = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    created_at = serializers.DateTimeField()


class PairSetDetailOut(PairSetOut):
    pair_list = serializers.SerializerMethodField()

    @extend_schema_field(PairOut(many=True))
    def get_pair_list(self, pair_set: PairSet) -> list[dict[str, Any]]:
        return PairOut(set_pairs(pair_set), many=True).data


class ScoresOut(serializers.Serializer):
    set = serializers.CharField(help_text="NAME@vVERSION")
    rule_set_version = serializers.CharField()
    rule_set_hash = serializers.CharField()
    parsers = serializers.ListField(
        child=serializers.DictField(),
        help_text="per parser: parser, backend, name, version, scored, reason (why not), unreadable "
        "outputs, report (evidence, families and overall, each with n and slot, label, clean and "
        "causal as {k, n, value, ci}), pairs (each pair's routed labels and tests)",
    )


# Requests --------------------------------------------------------------------------------------

NAME_PROBLEM = gettext_lazy("use 1-63 lower-case letters, digits, '.', '_' or '-'")
TEXT_MISSING = gettext_lazy("write the rewritten text")


class PairSetIn(serializers.Serializer):
    refuses_unknown_fields = True
    name = Text(
        max_length=63,
        trim_whitespace=False,
        validators=[RegexValidator(rf"^{NAME_PATTERN}$", message=NAME_PROBLEM)],
        help_text="the set's name, shared by its versions",
    )
    note = Text(required=False, allow_blank=True, max_length=NOTE_MAX, default="")


class PairIn(serializers.Serializer):
    """A pair: the item (its id), the rewrite, per target slot the value it flips to, and either
    the expected label of the rewrite or ``invariance``."""

    refuses_unknown_fields = True
    item = Whole(min_value=1, max_value=MAX_ID, help_text="the source item's id")
    text = Text(
        max_length=TEXT_MAX,
        help_text="x': the rewritten text",
        error_messages={"required": TEXT_MISSING, "blank": TEXT_MISSING},
        validators=[RegexValidator(r"\S", message=TEXT_MISSING)],
    )
    targets = SlotValues(
        required=False, default=dict, help_text="slot -> the value the rewrite flips it to (none: invariance)"
    )
    from_ = SlotValues(
        required=False,
        default=dict,
        help_text="slot -> the value it has in the item's text; only for an item without resolved gold "
        "(gold says it otherwise, and a value given must agree)",
    )
    expected = Text(
        required=False, allow_blank=True, max_length=32, default="",
        help_text="the label x' should route to: an emotion of the active rule set; empty for invariance",
    )  # fmt: skip
    invariance = Flag(
        required=False, default=False, help_text="nothing should change: no targets, no expected"
    )
    family = Text(
        required=False, allow_blank=True, max_length=FAMILY_MAX, default="",
        help_text="the edit family; empty: the target slots joined by '+', or invariance",
    )  # fmt: skip
    note = Text(required=False, allow_blank=True, max_length=NOTE_MAX, default="")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")  # a keyword in Python, a field name in the body
        return fields


CONFLICT = OpenApiResponse(
    description="the set's state refuses it now (frozen, already frozen, not the newest)"
)


# Views -----------------------------------------------------------------------------------------


class PairSetList(_View):
    @extend_schema(responses={200: PairSetOut(many=True)})
    def get(self, request: Request) -> Response:
        return Response(PairSetOut(pair_sets().order_by("name", "-version"), many=True).data)

    @extend_schema(
        request=PairSetIn,
        responses={201: PairSetOut, 409: OpenApiResponse(description="a set of that name exists")},
        description="Version 1 of a new set, open.",
    )
    def post(self, request: Request) -> Response:
        values = read_body(PairSetIn, request)
        if isinstance(values, Response):
            return values
        made = pair_set_create(user=request.user, **values)
        return Response(PairSetOut(_set(made.pk)).data, status=status.HTTP_201_CREATED)


class PairSetDetail(_View):
    @extend_schema(responses={200: PairSetDetailOut})
    def get(self, request: Request, set_id: int) -> Response:
        return Response(PairSetDetailOut(_set(set_id)).data)


class PairSetFreeze(_View):
    @extend_schema(request=None, responses={200: PairSetOut, 409: CONFLICT})
    def post(self, request: Request, set_id: int) -> Response:
        pair_set_freeze(user=request.user, pair_set=_set(set_id))
        return Response(PairSetOut(_set(set_id)).data)


class PairSetNewVersion(_View):
    @extend_schema(
        request=None,
        responses={201: PairSetOut, 409: CONFLICT},
        description="The next version of a frozen set (the newest of its name), open, with a copy of its "
        "pairs.",
    )
    def post(self, request: Request, set_id: int) -> Response:
        fresh = pair_set_new_version(user=request.user, pair_set=_set(set_id))
        return Response(PairSetOut(_set(fresh.pk)).data, status=status.HTTP_201_CREATED)


class PairList(_View):
    @extend_schema(responses={200: PairOut(many=True)})
    def get(self, request: Request, set_id: int) -> Response:
        return Response(PairOut(set_pairs(_set(set_id)), many=True).data)

    @extend_schema(
        request=PairIn,
        responses={201: PairOut, 409: CONFLICT},
        description="Add a pair to an open set. Beyond the schema a 400 names: an unknown item, a target "
        "slot whose value is the same on both sides, a value in 'from' that the item's gold contradicts or "
        "that no target needs, a missing 'from' for an item without gold, an expected label that is not "
        "an emotion of the active rule set, invariance with targets or an expected label, a flip pair "
        "without either.",
    )
    def post(self, request: Request, set_id: int) -> Response:
        pair_set = _set(set_id)
        values = read_body(PairIn, request)
        if isinstance(values, Response):
            return values
        values["from_values"] = values.pop("from")
        pair = pair_add(user=request.user, pair_set=pair_set, **values)
        made = MinimalPair.objects.select_related("item", "created_by").get(pk=pair.pk)
        return Response(PairOut(made).data, status=status.HTTP_201_CREATED)


class PairSetScores(_View):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "parser",
                {"type": "string", "maxLength": 100, "pattern": "^[^\\x00]*$"},
                description="one parser: lexical, NAME@VERSION or NAME (its newest); none: every parser",
            )
        ],
        responses={
            200: ScoresOut,
            404: OpenApiResponse(OpenApiTypes.OBJECT, description="no such set or parser"),
        },
        description="Every parser's slot, label, clean and causal rates on the set, per family and overall "
        "(exact 95% intervals); a parser that cannot run is listed with its reason. Parsed now, or "
        "read from the cache while the pairs, the parser and the rule set are unchanged.",
    )
    def get(self, request: Request, set_id: int) -> Response:
        pair_set = _set(set_id)
        chosen = request.query_params.get("parser", "")
        choices = None
        if chosen:
            found = parser_choice(chosen)
            if found is None:
                return Response({"detail": unknown_parser_message(chosen)}, status=status.HTTP_404_NOT_FOUND)
            choices = [found]
        rule_set = active_rule_set()
        scores = score_set(pair_set, choices=choices, rule_set=rule_set)
        doc = {
            "set": pair_set.spec,
            "rule_set_version": rule_set.version,
            "rule_set_hash": rule_set.content_hash,
            "parsers": [s.to_dict() for s in scores],
        }
        return Response(ScoresOut(doc).data)
