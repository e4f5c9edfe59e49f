"""Quality checks through the API: a round's settings (GET, PATCH), adding its control items
(POST controls/), its figures (GET figures/: accuracy on controls per annotator, alerts, control
progress, moves, nudges) and a sweep of its abandoned work (POST sweep/). Adjudicators and admins
read; admins write. For annotators' clients, POST /api/assignments/<id>/opened/: the opening the
annotation page posts. Bodies are JSON only and typed strictly; an unknown field or a bad value is
a 400 naming it, and nothing is written."""

from __future__ import annotations

import math
from typing import Any

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotator.api_fields import Flag, Text, Whole, printable
from annotator.models import Round
from annotator.roles import ADJUDICATOR, ADMIN, HasRole, IsMember
from annotator.selectors import assignment_for_user
from quality.abandoned import abandoned_sweep, opening_record
from quality.models import HOURS_MAX, MIN_ANSWERED_MAX, NUDGE_SECONDS_MAX, RATE_MAX, QualitySettings
from quality.selectors import quality_report, settings_dict
from quality.services import controls_add, quality_settings, quality_settings_set

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR, ADMIN, message=gettext_lazy("quality checks are for adjudicators and admins")
)
IsAdmin = HasRole(ADMIN, message=gettext_lazy("only admins change a round's quality checks"))


class Number(serializers.FloatField):
    """A JSON number (not "0.5", not true), finite."""

    default_error_messages = {"finite": gettext_lazy("must be a finite number")}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if not math.isfinite(data):
            self.fail("finite")
        return super().to_internal_value(data)


# Answers ---------------------------------------------------------------------------------------


class SettingsOut(serializers.Serializer):
    control_source = serializers.CharField(allow_null=True, help_text="a round's name; null: any other round")
    control_rate = serializers.FloatField(help_text="controls per annotator as a share of their items")
    threshold = serializers.FloatField(help_text="accuracy on controls below it alerts")
    measure = serializers.ChoiceField(choices=QualitySettings.Measure.values)
    min_answered = serializers.IntegerField(help_text="answered controls before an alert")
    abandon_hours = serializers.IntegerField(help_text="0: abandoned work stays")
    nudge = serializers.BooleanField()
    nudge_seconds = serializers.IntegerField()
    updated_by = serializers.CharField(allow_null=True)
    updated_at = serializers.CharField(allow_null=True, help_text="ISO 8601; null: never changed")


class ShareOut(serializers.Serializer):
    k = serializers.IntegerField()
    n = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True, help_text="Clopper-Pearson 95%")
    high = serializers.FloatField(allow_null=True)


class AnnotatorScoreOut(serializers.Serializer):
    annotator = serializers.CharField()
    assigned = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    pending = serializers.IntegerField()
    answered = serializers.IntegerField(help_text="done, with resolved gold to score against")
    routed = ShareOut(help_text="answers that route to gold's label")
    mean_slots = serializers.FloatField(allow_null=True, help_text="the mean of the twelve slots' accuracies")
    slots = serializers.DictField(child=ShareOut(), help_text="slot -> answers equal to gold")
    measured = serializers.FloatField(allow_null=True, help_text="the round's alert measure")
    alert = serializers.BooleanField()


class ControlCountsOut(serializers.Serializer):
    assigned = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    pending = serializers.IntegerField()


class MoveOut(serializers.Serializer):
    item = serializers.CharField(help_text="the item's source id")
    from_ = serializers.CharField()
    to = serializers.CharField()
    at = serializers.CharField()
    opened_at = serializers.CharField()
    idle_since = serializers.CharField()
    hours = serializers.IntegerField(help_text="the limit it went past")
    draft_deleted = serializers.BooleanField()
    by = serializers.CharField(allow_null=True, help_text="null: the periodic sweep")

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields


class NudgeOut(serializers.Serializer):
    annotator = serializers.CharField()
    nudges = serializers.IntegerField()
    fastest_ms = serializers.IntegerField()


class FiguresOut(serializers.Serializer):
    round = serializers.CharField()
    settings = SettingsOut()
    controls = ControlCountsOut(help_text="the round's control items, apart from its own work")
    annotators = AnnotatorScoreOut(many=True)
    alerts = serializers.ListField(child=serializers.CharField(), help_text="annotators below the threshold")
    moves = MoveOut(many=True)
    nudges = NudgeOut(many=True)


class ControlsOut(serializers.Serializer):
    added = serializers.DictField(child=serializers.IntegerField(), help_text="annotator -> controls added")
    short = serializers.DictField(
        child=serializers.IntegerField(), help_text="annotator -> controls missing: no eligible item left"
    )
    candidates = serializers.IntegerField(help_text="items that may be controls in this round")
    total = serializers.IntegerField()
    summary = serializers.CharField()


class SweepOut(serializers.Serializer):
    moved = serializers.IntegerField()
    stuck = serializers.IntegerField(help_text="abandoned, but nobody else in the pool may take them")
    summary = serializers.CharField()


# Requests --------------------------------------------------------------------------------------


class SettingsIn(serializers.Serializer):
    refuses_unknown_fields = True
    control_source = Text(
        required=False, allow_null=True, max_length=100, help_text="a round's name; null: any other round"
    )
    control_rate = Number(required=False, min_value=0, max_value=RATE_MAX)
    threshold = Number(required=False, min_value=0, max_value=1)
    measure = serializers.ChoiceField(required=False, choices=QualitySettings.Measure.values)
    min_answered = Whole(required=False, min_value=1, max_value=MIN_ANSWERED_MAX)
    abandon_hours = Whole(required=False, min_value=0, max_value=HOURS_MAX)
    nudge = Flag(required=False)
    nudge_seconds = Whole(required=False, min_value=1, max_value=NUDGE_SECONDS_MAX)


class ControlsIn(serializers.Serializer):
    refuses_unknown_fields = True
    control_rate = Number(
        required=False, min_value=0, max_value=RATE_MAX, help_text="also saved as the round's"
    )
    control_source = Text(
        required=False, allow_null=True, max_length=100, help_text="also saved as the round's"
    )


class SweepIn(serializers.Serializer):
    refuses_unknown_fields = True
    hours = Whole(required=False, min_value=1, max_value=HOURS_MAX, help_text="instead of the round's limit")


def _read(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any] | Response:
    """The body's values (an empty body is an empty object), or the 400 naming each bad field."""
    body = request.data if request.data not in (None, "") else {}
    if not isinstance(body, dict):
        return Response({"detail": _("expected a JSON object")}, status=status.HTTP_400_BAD_REQUEST)
    data = serializer_class(data=body)
    unknown = sorted(printable(str(k)) for k in set(body) - set(data.fields))
    if unknown:
        return Response({k: [_("unknown field")] for k in unknown}, status=status.HTTP_400_BAD_REQUEST)
    if not data.is_valid():
        return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
    values = dict(data.validated_data)
    if values.get("control_source") is not None:
        source = Round.objects.filter(name=values["control_source"]).first()
        if source is None:
            problem = _("no round named %(name)s") % {"name": repr(values["control_source"])}
            return Response({"control_source": [problem]}, status=status.HTTP_400_BAD_REQUEST)
        values["control_source"] = source
    return values


class _View(APIView):
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)

    def get_permissions(self):
        roles = IsAdjudicatorOrAdmin if self.request.method in ("GET", "HEAD", "OPTIONS") else IsAdmin
        return [IsAuthenticated(), roles()]


def _round(round_id: int) -> Round:
    return get_object_or_404(Round.objects.select_related("item_set"), pk=round_id)


class QualityDetail(_View):
    @extend_schema(responses={200: SettingsOut}, description="The round's quality settings.")
    def get(self, request: Request, round_id: int) -> Response:
        return Response(SettingsOut(settings_dict(quality_settings(_round(round_id)))).data)

    @extend_schema(
        request=SettingsIn,
        responses={200: SettingsOut},
        description="Change some of the round's quality settings; the others keep their value.",
    )
    def patch(self, request: Request, round_id: int) -> Response:
        round_ = _round(round_id)
        values = _read(SettingsIn, request)
        if isinstance(values, Response):
            return values
        settings = quality_settings_set(round_=round_, user=request.user, **values)
        return Response(SettingsOut(settings_dict(settings)).data)


class QualityControls(_View):
    @extend_schema(
        request=ControlsIn,
        responses={200: ControlsOut},
        description="Mix control items into the round at its control rate (after saving a rate or a "
        "source given here): what is missing per annotator, spread through their queues.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        round_ = _round(round_id)
        values = _read(ControlsIn, request)
        if isinstance(values, Response):
            return values
        added = controls_add(round_=round_, user=request.user, **values)
        body = {"added": added.added, "short": added.short, "candidates": added.candidates,
                "total": added.total, "summary": added.summary()}  # fmt: skip
        return Response(ControlsOut(body).data)


class QualityFigures(_View):
    @extend_schema(
        responses={200: FiguresOut},
        description="Accuracy on control items per annotator (per slot and routed label, exact 95% "
        "intervals), the alerts, the control progress, the assignments moved back to the pool and the "
        "nudges.",
    )
    def get(self, request: Request, round_id: int) -> Response:
        return Response(FiguresOut(quality_report(_round(round_id))).data)


class QualitySweep(_View):
    @extend_schema(
        request=SweepIn,
        responses={200: SweepOut},
        description="Move the round's abandoned assignments back to the pool now.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        round_ = _round(round_id)
        values = _read(SweepIn, request)
        if isinstance(values, Response):
            return values
        result = abandoned_sweep(round_=round_, hours=values.get("hours"), user=request.user)
        body = {
            "moved": sum(result.moved.values()),
            "stuck": sum(result.stuck.values()),
            "summary": result.summary(),
        }
        return Response(SweepOut(body).data)


class AssignmentOpened(APIView):
    """What the annotation page posts once it has shown an assignment, for API clients that show
    assignments to their annotators: abandoned work is judged from it (docs/quality.md)."""

    permission_classes = [IsMember]

    @extend_schema(
        request=None,
        responses={204: None},
        description="Say that your assignment is open in front of its annotator: the first time starts "
        "its opening, a later one is activity. An assignment opened and left with nothing saved for the "
        "round's abandon_hours goes back to the pool. Another annotator's assignment is a 404.",
    )
    def post(self, request: Request, pk: int) -> Response:
        opening_record(assignment=assignment_for_user(request.user, pk), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
