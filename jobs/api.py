"""REST API for jobs and exports (admins only): start a job of every kind (prefill, verify,
export, train, raw-annotation export), list and read jobs with their progress, cancel, resume,
legality; list exports and download their files.

A start endpoint other than prefill validates with the page's own form (jobs.forms), run on the
request's values (the page's defaults for those left out), and starts the job with the form's
``start``: the API and the page accept and refuse the same things, with the same messages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.models import ItemSet, Round
from annotator.roles import ADMIN, HasRole
from jobs.downloads import CONTENT_TYPES, export_file_response
from jobs.filters import ExportFilter, JobFilter
from jobs.forms import ExportForm, RawExportForm, TrainForm, VerifyForm
from jobs.kinds import JobError
from jobs.models import Export, Job
from jobs.prefill import MODES, job_prefill_start
from jobs.raw_export import FORMATS
from jobs.selectors import legality_report
from jobs.services import QUEUE_DOWN, JobConflict, job_cancel, job_queue, job_resume
from jobs.training import METHODS, TrainParams
from nsmcore.parsers import BACKENDS

#: the answers every admin endpoint may give a caller who is not one
DENIED = {
    401: OpenApiResponse(description="not signed in (with an authentication that asks for credentials)"),
    403: OpenApiResponse(description="not signed in, or not an admin"),
}
NOT_FOUND = {404: OpenApiResponse(description="no such object")}
BAD = {400: OpenApiResponse(description="bad parameters: each named, with the reason")}
CONFLICT = {409: OpenApiResponse(description="the same job is already active: its id is given")}


IsAdmin = HasRole(ADMIN, message="jobs are for admins")


class JobOut(serializers.ModelSerializer):
    subject = serializers.CharField(read_only=True)
    percent = serializers.IntegerField(read_only=True)
    rate = serializers.FloatField(read_only=True, allow_null=True, help_text="items parsed per second")
    seconds_left = serializers.FloatField(read_only=True, allow_null=True)
    stalled = serializers.BooleanField(
        read_only=True, help_text="running, but its worker has sent no heartbeat for NSM_JOB_STALL_SECONDS"
    )
    queue = serializers.SerializerMethodField(help_text="the Celery queue the job is sent to (its kind's)")
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, default=None, allow_null=True
    )
    download = serializers.SerializerMethodField(
        help_text="a finished export's file (absolute URL of its API download); null otherwise"
    )
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
            "heartbeat_at", "queue", "download",
        ]  # fmt: skip

    def get_queue(self, job: Job) -> str:
        return job_queue(job)

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_download(self, job: Job) -> str | None:
        export = getattr(job, "export", None)  # the reverse one-to-one: none until the file is complete
        return _download_url(self.context.get("request"), export) if export is not None else None


def _download_url(request: Request | None, export: Export) -> str:
    url = reverse("api_export_download", args=[export.pk])
    return request.build_absolute_uri(url) if request is not None else url


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
            raise serializers.ValidationError("give one of item_set or round")
        return data


class FormIn(serializers.Serializer):
    """Input checked by a page's form (``form_class``) after the serializer's own type checks: the
    form gets the page's defaults for the fields left out, and its errors come back as the
    serializer's, under the API's field names. The valid form is kept as ``self.form``, to start
    the job with (its ``start``)."""

    form_class: type[forms.Form]
    #: the form's field holding the item set or round, and the API fields it is given as
    scope_fields: tuple[str, ...] = ()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        form = self.form_class()
        values = {name: form.get_initial_for_field(field, name) for name, field in form.fields.items()}
        values = {name: value for name, value in values.items() if value is not None}
        values.update(
            {k: v.pk if hasattr(v, "pk") else v for k, v in data.items() if k not in self.scope_fields}
        )
        given = [name for name in self.scope_fields if data.get(name) is not None]
        if self.scope_fields:
            if len(given) != 1:
                raise serializers.ValidationError(
                    {"non_field_errors": [f"give one of {' or '.join(self.scope_fields)}"]}
                )
            values["target"] = f"{'set' if given[0] == 'item_set' else 'round'}:{data[given[0]].pk}"
        self.form = self.form_class(values)
        if not self.form.is_valid():
            errors: dict[str, list[str]] = {}
            # the form's target is the scope field given; its errors of no field are the serializer's
            names = {"target": given[0] if given else "non_field_errors", "__all__": "non_field_errors"}
            for name, messages in self.form.errors.items():
                errors.setdefault(names.get(name, name), []).extend(messages)
            raise serializers.ValidationError(errors)
        return data


class VerifyIn(FormIn):
    form_class = VerifyForm
    scope_fields = ("item_set", "round")

    item_set = serializers.PrimaryKeyRelatedField(
        queryset=ItemSet.objects.all(), required=False, help_text="a parser's explications over it"
    )
    round = serializers.PrimaryKeyRelatedField(
        queryset=Round.objects.all(), required=False, help_text="its resolved gold"
    )
    parser = serializers.CharField(
        required=False, allow_blank=True, max_length=300,
        help_text="for an item set: whose explications are checked (default: lexical)",
    )  # fmt: skip
    model = serializers.CharField(
        required=False, allow_blank=True, max_length=250, help_text="NLI model; empty: NSM_VERIFIER_MODEL"
    )
    text_field = serializers.ChoiceField(choices=[f for f, _ in Round.TEXT_FIELDS], required=False)


class ExportIn(FormIn):
    form_class = ExportForm

    round = serializers.PrimaryKeyRelatedField(
        queryset=Round.objects.all(), required=False, allow_null=True,
        help_text="one round's gold; null or left out: the whole gold corpus",
    )  # fmt: skip
    verify = serializers.BooleanField(
        required=False, default=True, help_text="check every line with the NLI model (default true)"
    )
    model = serializers.CharField(
        required=False, allow_blank=True, max_length=250, help_text="NLI model; empty: NSM_VERIFIER_MODEL"
    )


class RawExportIn(FormIn):
    form_class = RawExportForm

    round = serializers.PrimaryKeyRelatedField(queryset=Round.objects.all())
    format = serializers.ChoiceField(choices=FORMATS, required=False, help_text="jsonl (default) or csv")


_TRAIN = TrainParams.__dataclass_fields__


class TrainIn(FormIn):
    """The train form's fields; left out, the page's defaults (TrainParams')."""

    form_class = TrainForm
    scope_fields = ("item_set", "round")

    item_set = serializers.PrimaryKeyRelatedField(
        queryset=ItemSet.objects.all(), required=False, help_text="the resolved gold of its items"
    )
    round = serializers.PrimaryKeyRelatedField(
        queryset=Round.objects.all(), required=False, help_text="the round's gold (and passes)"
    )
    passes = serializers.CharField(
        required=False, max_length=300, help_text="comma-separated: gold, annotator:NAME (default gold)"
    )
    method = serializers.ChoiceField(choices=METHODS, required=False, help_text="default lora")
    base_model = serializers.CharField(
        required=False, allow_blank=True, max_length=250, help_text="lora only (default NSM_PARSER_MODEL)"
    )
    output_dir = serializers.CharField(required=False, allow_blank=True, max_length=250)
    rank = serializers.IntegerField(required=False, min_value=1)
    alpha = serializers.IntegerField(required=False, min_value=1)
    dropout = serializers.FloatField(required=False, min_value=0, max_value=0.99)
    target_modules = serializers.CharField(required=False, allow_blank=True, max_length=300)
    epochs = serializers.IntegerField(required=False, min_value=1)
    learning_rate = serializers.FloatField(required=False, min_value=1e-7, max_value=0.5)
    batch_size = serializers.IntegerField(required=False, min_value=1)
    grad_accum = serializers.IntegerField(required=False, min_value=1)
    max_length = serializers.IntegerField(required=False, min_value=64)
    seed = serializers.IntegerField(required=False, min_value=0)
    gradient_checkpointing = serializers.BooleanField(required=False, default=False)
    parser_name = serializers.CharField(
        required=False, allow_blank=True, max_length=63,
        help_text="the registry name the trained parser gets; empty: METHOD-SCOPE",
    )  # fmt: skip
    labels_from = serializers.CharField(
        required=False, allow_blank=True, max_length=100,
        help_text="classifier only: an item set whose reference labels train through the rules",
    )  # fmt: skip
    encoder = serializers.CharField(
        required=False, allow_blank=True, max_length=250,
        help_text="classifier only: 'bundled' (all-MiniLM-L6-v2) or a model folder",
    )  # fmt: skip
    appraisal_weight = serializers.FloatField(required=False, min_value=0, max_value=10)
    label_trust = serializers.FloatField(required=False, min_value=0.000001, max_value=1)
    label_prior = serializers.FloatField(required=False, min_value=0, max_value=100)
    abstain_below = serializers.CharField(
        required=False, allow_blank=True, max_length=20,
        help_text="classifier only, with labels: 'auto', a share between 0 and 1, or empty (never)",
    )  # fmt: skip


class ExportOut(serializers.ModelSerializer):
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, default=None, allow_null=True
    )
    scope = serializers.CharField(read_only=True)
    download = serializers.SerializerMethodField(help_text="absolute URL of the file's download")

    class Meta:
        model = Export
        fields = [
            "id", "kind", "job", "round", "scope", "created_by", "created_at", "filename", "bytes", "sha256",
            "records", "lines", "verifier", "rule_set_version", "download",
        ]  # fmt: skip

    def get_download(self, export: Export) -> str:
        return _download_url(self.context.get("request"), export)


class ExportDetailOut(ExportOut):
    class Meta(ExportOut.Meta):
        fields = [*ExportOut.Meta.fields, "jsonl_sha256", "manifest"]


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


_JOBS = Job.objects.select_related("item_set", "round", "created_by", "export")


@extend_schema(responses={200: JobOut, **BAD, **DENIED, **NOT_FOUND})
class JobList(generics.ListAPIView):
    """Jobs of every kind, newest first; ?kind=, ?status=, ?round= (a round's id)."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = JobOut
    queryset = _JOBS
    filterset_class = JobFilter


@extend_schema(responses={200: JobOut, **DENIED, **NOT_FOUND})
class JobDetail(generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = JobOut
    queryset = _JOBS


def _conflict(conflict: JobConflict) -> Response:
    return Response({"detail": str(conflict), "job": conflict.job.pk}, status=status.HTTP_409_CONFLICT)


#: seconds a client is told to wait before trying again when the job queue cannot be reached
QUEUE_RETRY_AFTER = 30
QUEUE_UNAVAILABLE = {503: OpenApiResponse(description="the job queue (broker) cannot be reached; retry")}


def _created(request: Request, job: Job) -> Response:
    """201 with the job; 503 naming the broker when it could not be handed to the worker (the job
    is kept, failed with the reason, and can be resumed once the queue is back)."""
    job.refresh_from_db()  # sending it (on commit) may have failed it since it was made
    if job.status == Job.Status.FAILED and job.error.startswith(QUEUE_DOWN):
        body = {
            "detail": f"{job.error}; job #{job.pk} is kept: resume it when the queue is back",
            "job": job.pk,
        }
        return Response(
            body, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": str(QUEUE_RETRY_AFTER)}
        )
    return Response(JobOut(job, context={"request": request}).data, status=status.HTTP_201_CREATED)


class PrefillStart(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(
        request=PrefillIn, responses={201: JobOut, **BAD, **DENIED, **CONFLICT, **QUEUE_UNAVAILABLE}
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
            return _conflict(conflict)
        except JobError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return _created(request, job)


class _FormStart(APIView):
    """Start a job with a page's form (the serializer's ``form_class``): 201 with the job, 400
    naming the field, 409 when the same job is already active."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class: type[FormIn]

    def post(self, request: Request) -> Response:
        data = self.serializer_class(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job = data.form.start(user=request.user)
        except JobConflict as conflict:
            return _conflict(conflict)
        except JobError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return _created(request, job)


_STARTED = {201: JobOut, **BAD, **DENIED, **CONFLICT, **QUEUE_UNAVAILABLE}


@extend_schema(request=VerifyIn, responses=_STARTED)
class VerifyStart(_FormStart):
    """Verify a parser's explications over an item set, or a round's gold, with an NLI model."""

    serializer_class = VerifyIn


@extend_schema(request=ExportIn, responses=_STARTED)
class ExportStart(_FormStart):
    """An EmoExpl export of the whole gold corpus or one round's gold."""

    serializer_class = ExportIn


@extend_schema(request=TrainIn, responses=_STARTED)
class TrainStart(_FormStart):
    """Train a parser (a LoRA adapter or the classifier) on a round's or an item set's gold."""

    serializer_class = TrainIn


@extend_schema(request=RawExportIn, responses=_STARTED)
class RawExportStart(_FormStart):
    """Export one round's raw annotations (every revision of every annotator) as JSONL or CSV."""

    serializer_class = RawExportIn


class _JobAction(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]
    perform = staticmethod(job_cancel)

    @extend_schema(
        request=None,
        responses={
            200: JobOut, **DENIED, **NOT_FOUND, 409: OpenApiResponse(description="not possible now"),
        },
    )  # fmt: skip
    def post(self, request: Request, pk: int) -> Response:
        job = generics.get_object_or_404(Job, pk=pk)
        try:
            job = self.perform(job=job)
        except JobError as error:
            return Response({"detail": str(error)}, status=status.HTTP_409_CONFLICT)
        return Response(JobOut(job, context={"request": request}).data)


class JobCancel(_JobAction):
    perform = staticmethod(job_cancel)


class JobResume(_JobAction):
    perform = staticmethod(job_resume)


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
                {"detail": "the job has not loaded its parser yet"}, status=status.HTTP_404_NOT_FOUND
            )
        return Response(LegalityOut(report).data)


_EXPORTS = Export.objects.select_related("round", "created_by")


@extend_schema(responses={200: ExportOut, **BAD, **DENIED, **NOT_FOUND})
class ExportList(generics.ListAPIView):
    """Completed exports of both kinds (EmoExpl gold archives, raw annotations), newest first;
    ?kind=emoexpl|raw, ?round= (a round's id)."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = ExportOut
    queryset = _EXPORTS
    filterset_class = ExportFilter


@extend_schema(responses={200: ExportDetailOut, **DENIED, **NOT_FOUND})
class ExportDetail(generics.RetrieveAPIView):
    """One export, with its manifest."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = ExportDetailOut
    queryset = _EXPORTS


class AnyAccept(BaseContentNegotiation):
    """The download answers its file whatever the client accepts (and an error as JSON), instead
    of a 406 to a client that asks for the file's own type."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportDownload(APIView):
    """The export's file, the same response as the Exports page's download."""

    permission_classes = [IsAuthenticated & IsAdmin]
    content_negotiation_class = AnyAccept

    @extend_schema(
        responses={
            **{(200, media.split(";")[0]): OpenApiTypes.BINARY for media in CONTENT_TYPES.values()},
            **DENIED,
            404: OpenApiResponse(description="no such export, or its file is no longer on the server"),
        }
    )
    def get(self, request: Request, pk: int):
        return export_file_response(generics.get_object_or_404(Export, pk=pk))
