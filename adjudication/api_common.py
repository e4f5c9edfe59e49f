"""What the conventions and gold API (adjudication.conventions.api, adjudication.gold.api) share:
who may read and act, the strictly typed fields of their JSON bodies, and how a refusal is
answered.

A refused step is a 400 when the values asked for are wrong (each named by its field) and a 409
when the state of a record forbids it now (``AdjudicationConflict``: a convention already decided,
a vote already cast, a gold record changed since it was read); either way nothing is written.
Bodies are JSON only, and typed strictly: ``12`` is not a string, ``"true"`` not a boolean, so
what the schema says a field takes is what it takes."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotator.api_fields import printable
from annotator.filters import MAX_ID
from annotator.models import Round
from annotator.roles import ADJUDICATOR, ADMIN, HasRole, user_roles
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS

ID_RANGE = {"minimum": 1, "maximum": MAX_ID}  # the ids IdFilter takes: what a database column holds

# Permissions ---------------------------------------------------------------------------------------


READ_REFUSED = gettext_lazy("conventions and gold are for adjudicators and admins")
WRITE_REFUSED = gettext_lazy("only adjudicators propose, vote, apply, revise, withdraw and resolve")


class ReadsForAdjudicatorsAndAdmins(BasePermission):
    """Reads for adjudicators and admins, writes for adjudicators only, as on the pages."""

    def has_permission(self, request: Request, view: Any) -> bool:
        roles = user_roles(request.user)
        if request.method in SAFE_METHODS:
            self.message = READ_REFUSED
            return bool(roles & {ADJUDICATOR, ADMIN})
        self.message = WRITE_REFUSED
        return ADJUDICATOR in roles


AdjudicatorsAndAdmins = HasRole(ADJUDICATOR, ADMIN, message=READ_REFUSED)


class _View(APIView):
    permission_classes = [IsAuthenticated, ReadsForAdjudicatorsAndAdmins]
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)


# Strict input fields: JSON's types as the schema states them ---------------------------------------


# the forms' and the services' wording, so that a script reads what a person would
RULE_MISSING = gettext_lazy("write the convention in words: it joins the guidelines")
REVISION_MISSING = gettext_lazy("write the revised convention in words")
WHY_MISSING = gettext_lazy("say why the item is resolved this way (it goes into the audit trail)")


def _written(message: str) -> dict[str, Any]:
    """A required text: ``message`` when it is absent or blank (whitespace is trimmed first). The
    validator never fails after that; it puts the rule in the schema (``pattern``), so that a
    client, or a fuzzer, knows that spaces alone are no text."""
    return {
        "error_messages": {"required": message, "blank": message},
        "validators": [RegexValidator(r"\S", message=message)],
    }


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
            raise serializers.ValidationError(_('expected an object of slot values: {"agency": "i"}'))
        problems: dict[str, str] = {}
        for name, value in data.items():
            slot = SLOT_BY_NAME.get(name)
            if slot is None:
                problems[printable(name)] = _("unknown slot; slots: %(slots)s") % {
                    "slots": ", ".join(SLOT_NAMES)
                }
            elif not isinstance(value, str) or value not in slot.values:
                shown = printable(value) if isinstance(value, str) else value
                problems[name] = _("%(value)s is not an allowed value; allowed: %(allowed)s") % {
                    "value": repr(shown),
                    "allowed": ", ".join(slot.values),
                }
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


def _invalid(data: serializers.Serializer) -> Response:
    return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
