"""REST API of the predictions app (admins only): start a prefill job; a prefill job's legality report."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api_fields import Flag, Text
from annotator.models import ItemSet, Round
from jobs.api import (
    BAD,
    CONFLICT,
    DENIED,
    QUEUE_UNAVAILABLE,
    IsAdmin,
    JobOut,
    created_response,
)  # fmt: skip
from jobs.models import Job
from nsmcore.parsers import BACKENDS
from predictions.parsers import model_backend, model_name_problem
from predictions.prefill import MODES, job_prefill_start
from predictions.selectors import legality_report


class PrefillIn(serializers.Serializer):
    item_set = serializers.PrimaryKeyRelatedField(queryset=ItemSet.objects.all(), required=False)
    round = serializers.PrimaryKeyRelatedField(queryset=Round.objects.all(), required=False)
    backend = serializers.ChoiceField(choices=BACKENDS, required=False)
    model = Text(
        required=False, allow_blank=True, max_length=250,
        help_text="a registered parser's name (NAME or NAME@VERSION), or a hub or server model name; never "
        "a folder on the server (empty: the setting)",
    )  # fmt: skip
    mode = serializers.ChoiceField(choices=MODES, required=False)
    text_field = serializers.ChoiceField(choices=[f for f, _ in Round.TEXT_FIELDS], required=False)
    overwrite = Flag(required=False, default=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if "adapter" in self.initial_data:  # a folder on the server: never taken over the API
            raise serializers.ValidationError(
                {"adapter": [_("not taken: a LoRA adapter is chosen by its registered name, as model "
                               "(a train job registers it; the Parsers page lists them)")]}
            )  # fmt: skip
        if ("item_set" in data) == ("round" in data):
            raise serializers.ValidationError(
                _("give one of %(fields)s") % {"fields": _(" or ").join(("item_set", "round"))}
            )
        model = data.get("model", "")
        backend = data.get("backend") or model_backend(model)
        problem = model_name_problem(backend, model)
        if problem:
            raise serializers.ValidationError({"model": [problem]})
        return data


class LegalityOut(serializers.Serializer):
    parser = serializers.CharField()
    version = serializers.CharField()
    parsed = serializers.IntegerField()
    legal = serializers.IntegerField()
    share_legal = serializers.FloatField(allow_null=True)
    illegal_values = serializers.SerializerMethodField()
    other_problems = serializers.SerializerMethodField()

    def get_illegal_values(self, report) -> list[dict[str, Any]]:
        return [{"slot": s, "value": v, "count": n} for s, v, n in report.illegal_values]

    def get_other_problems(self, report) -> list[dict[str, Any]]:
        return [{"slot": s, "problem": m, "count": n} for s, m, n in report.other_problems]


class PrefillStart(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(
        request=PrefillIn, responses={201: JobOut, **BAD, **DENIED, **CONFLICT, **QUEUE_UNAVAILABLE}
    )
    def post(self, request: Request) -> Response:
        data = PrefillIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        job = job_prefill_start(
            user=request.user,
            item_set=v.get("item_set"),
            round_=v.get("round"),
            backend=v.get("backend", ""),
            model=v.get("model", ""),
            mode=v.get("mode", ""),
            text_field=v.get("text_field", ""),
            overwrite=v["overwrite"],
        )
        return created_response(request, job)


class JobLegality(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(
        responses={
            200: LegalityOut, **DENIED,
            404: OpenApiResponse(description="no such job, or no parser has run in it yet"),
        }
    )  # fmt: skip
    def get(self, request: Request, pk: int) -> Response:
        job = generics.get_object_or_404(Job, pk=pk)
        report = legality_report(job)
        if report is None:
            return Response(
                {"detail": _("the job has not loaded its parser yet")}, status=status.HTTP_404_NOT_FOUND
            )
        return Response(LegalityOut(report).data)
