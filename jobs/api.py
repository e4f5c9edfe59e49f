"""REST API for jobs (admins only): start a prefill, read progress, cancel, resume, legality."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.models import ItemSet, Round
from annotator.roles import ADMIN, has_role
from jobs.kinds import JobError
from jobs.models import Job
from jobs.prefill import MODES, job_prefill_start
from jobs.selectors import legality_report
from jobs.services import JobConflict, job_cancel, job_resume
from nsmcore.parsers import BACKENDS


class IsAdmin(BasePermission):
    message = "jobs are for admins"

    def has_permission(self, request: Request, view: Any) -> bool:
        return has_role(request.user, ADMIN)


class JobOut(serializers.ModelSerializer):
    subject = serializers.CharField(read_only=True)
    percent = serializers.IntegerField(read_only=True)
    rate = serializers.FloatField(read_only=True, allow_null=True, help_text="items parsed per second")
    seconds_left = serializers.FloatField(read_only=True, allow_null=True)
    stalled = serializers.BooleanField(read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)
    engine = serializers.CharField(
        read_only=True, help_text="the model or parser the job ran with (empty: not loaded yet)"
    )
    engine_version = serializers.CharField(read_only=True, help_text="its version or revision")

    class Meta:
        model = Job
        fields = [
            "id", "kind", "status", "subject", "item_set", "round", "params", "engine", "engine_version",
            "total", "done", "skipped", "legal", "illegal", "percent", "rate", "seconds_left", "stalled",
            "error", "cancel_requested", "created_by", "created_at", "started_at", "finished_at",
        ]  # fmt: skip


class PrefillIn(serializers.Serializer):
    item_set = serializers.PrimaryKeyRelatedField(queryset=ItemSet.objects.all(), required=False)
    round = serializers.PrimaryKeyRelatedField(queryset=Round.objects.all(), required=False)
    backend = serializers.ChoiceField(choices=BACKENDS, required=False)
    model = serializers.CharField(required=False, allow_blank=True, max_length=250)
    mode = serializers.ChoiceField(choices=MODES, required=False)
    text_field = serializers.ChoiceField(choices=[f for f, _ in Round.TEXT_FIELDS], required=False)
    overwrite = serializers.BooleanField(required=False, default=False)
    adapter = serializers.CharField(required=False, allow_blank=True, max_length=250)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("item_set" in data) == ("round" in data):
            raise serializers.ValidationError("give item_set or round, not both")
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


class JobList(generics.ListAPIView):
    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = JobOut
    queryset = Job.objects.select_related("item_set", "round", "created_by")


class JobDetail(generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = JobOut
    queryset = Job.objects.select_related("item_set", "round", "created_by")


class PrefillStart(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(
        request=PrefillIn,
        responses={
            201: JobOut,
            400: OpenApiResponse(description="bad parameters, named"),
            409: OpenApiResponse(description="the same job is already active: its id is given"),
        },
    )
    def post(self, request: Request) -> Response:
        data = PrefillIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            job = job_prefill_start(
                user=request.user,
                item_set=v.get("item_set"),
                round_=v.get("round"),
                backend=v.get("backend", ""),
                model=v.get("model", ""),
                mode=v.get("mode", ""),
                text_field=v.get("text_field", ""),
                overwrite=v["overwrite"],
                adapter=v.get("adapter", ""),
            )
        except JobConflict as conflict:
            return Response(
                {"detail": str(conflict), "job": conflict.job.pk}, status=status.HTTP_409_CONFLICT
            )
        except JobError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(JobOut(job).data, status=status.HTTP_201_CREATED)


class _JobAction(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]
    perform = staticmethod(job_cancel)

    @extend_schema(
        request=None, responses={200: JobOut, 409: OpenApiResponse(description="not possible now")}
    )
    def post(self, request: Request, pk: int) -> Response:
        job = generics.get_object_or_404(Job, pk=pk)
        try:
            job = self.perform(job=job)
        except JobError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response(JobOut(job).data)


class JobCancel(_JobAction):
    perform = staticmethod(job_cancel)


class JobResume(_JobAction):
    perform = staticmethod(job_resume)


class JobLegality(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(responses={200: LegalityOut, 404: OpenApiResponse(description="no parser has run yet")})
    def get(self, request: Request, pk: int) -> Response:
        job = generics.get_object_or_404(Job, pk=pk)
        report = legality_report(job)
        if report is None:
            return Response(
                {"detail": "the job has not loaded its parser yet"}, status=status.HTTP_404_NOT_FOUND
            )
        return Response(LegalityOut(report).data)
