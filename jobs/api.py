"""REST API for jobs of every kind (admins only): list and read jobs with their progress, cancel
and resume them; and what each kind's start endpoint (in its feature app) is built from.

A start endpoint validates with the page's own form (``FormIn``), run on the request's values (the
page's defaults for those left out), and starts the job with the form's ``start`` (``FormStart``):
the API and the page accept and refuse the same things, with the same messages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api_fields import Flag, Text
from annotator.models import ItemSet, Round
from annotator.roles import ADMIN, HasRole
from jobs.filters import JobFilter
from jobs.kinds import kinds_related, registered_kind
from jobs.models import Job
from jobs.services import QUEUE_DOWN, job_cancel, job_queue, job_resume

#: the answers every admin endpoint may give a caller who is not one
DENIED = {
    401: OpenApiResponse(description="not signed in (with an authentication that asks for credentials)"),
    403: OpenApiResponse(description="not signed in, or not an admin"),
}
NOT_FOUND = {404: OpenApiResponse(description="no such object")}
BAD = {400: OpenApiResponse(description="bad parameters: each named, with the reason")}
CONFLICT = {409: OpenApiResponse(description="the same job is already active: its id is given")}


IsAdmin = HasRole(ADMIN, message=gettext_lazy("jobs are for admins"))


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
        help_text="what the job made, once it is complete (absolute URL: an export's file); null otherwise"
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
        kind = registered_kind(job.kind)
        path = kind.result_path(job) if kind is not None and kind.result_path is not None else None
        return absolute(self.context.get("request"), path) if path else None


def absolute(request: Request | None, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


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
                    {
                        "non_field_errors": [
                            _("give one of %(fields)s") % {"fields": _(" or ").join(self.scope_fields)}
                        ]
                    }
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


def serializer_field(field: forms.Field) -> serializers.Field:
    """The API's field for a start form's field: the same type, bounds, choices and help, so the
    two are declared once (in the form, or the parameters it is built from: jobs.forms.setting_field).
    Never required but where the form's field has no default; one left out gets the form's initial
    value (FormIn)."""
    help_text = str(field.help_text) or None
    if isinstance(field, forms.ModelChoiceField):
        return serializers.PrimaryKeyRelatedField(
            queryset=field.queryset,
            required=field.required,
            allow_null=not field.required,
            help_text=help_text,
        )
    common: dict[str, Any] = {"required": False, "help_text": help_text}
    if isinstance(field, forms.BooleanField):
        return Flag(**common)
    if isinstance(field, forms.FloatField):  # before IntegerField: a FloatField is one
        return serializers.FloatField(min_value=field.min_value, max_value=field.max_value, **common)
    if isinstance(field, forms.IntegerField):
        return serializers.IntegerField(min_value=field.min_value, max_value=field.max_value, **common)
    if isinstance(field, forms.ChoiceField):
        return serializers.ChoiceField(choices=[value for value, _ in field.choices], **common)
    return Text(allow_blank=True, max_length=field.max_length, **common)


def form_in(
    form_class: type[forms.Form], *, scope: tuple[str, str] | None = None, doc: str = "", **declared
) -> type[FormIn]:
    """The input serializer of a start endpoint: a field for each of the form's, checked by the
    form itself (FormIn). A form whose ``target`` is an item set or a round takes it as one of
    ``item_set`` and ``round`` (ids), each with its help in ``scope``."""
    fields = {name: serializer_field(f) for name, f in form_class.base_fields.items() if name != "target"}
    if scope is not None:
        for (name, queryset), help_text in zip(
            (("item_set", ItemSet.objects.all()), ("round", Round.objects.all())), scope, strict=True
        ):
            fields[name] = serializers.PrimaryKeyRelatedField(
                queryset=queryset, required=False, help_text=help_text
            )
    scope_fields = ("item_set", "round") if scope is not None else ()
    attrs = {**fields, **declared, "form_class": form_class, "scope_fields": scope_fields, "__doc__": doc}
    name = form_class.__name__.removesuffix("Form") + "In"
    return type(name, (FormIn,), {"__module__": form_class.__module__, **attrs})


def jobs_read():
    """Jobs with what their lists show, and what their kinds made (an export...)."""
    return Job.objects.select_related("item_set", "round", "created_by", *kinds_related())


@extend_schema(responses={200: JobOut, **BAD, **DENIED, **NOT_FOUND})
class JobList(generics.ListAPIView):
    """Jobs of every kind, newest first; ?kind=, ?status=, ?round= (a round's id)."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = JobOut
    filterset_class = JobFilter

    def get_queryset(self):
        return jobs_read()


@extend_schema(responses={200: JobOut, **DENIED, **NOT_FOUND})
class JobDetail(generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = JobOut

    def get_queryset(self):
        return jobs_read()


#: seconds a client is told to wait before trying again when the job queue cannot be reached
QUEUE_RETRY_AFTER = 30
QUEUE_UNAVAILABLE = {503: OpenApiResponse(description="the job queue (broker) cannot be reached; retry")}


def created_response(request: Request, job: Job) -> Response:
    """201 with the job; 503 naming the broker when it could not be handed to the worker (the job
    is kept, failed with the reason, and can be resumed once the queue is back)."""
    job.refresh_from_db()  # sending it (on commit) may have failed it since it was made
    if job.status == Job.Status.FAILED and job.error.startswith(QUEUE_DOWN):
        body = {
            "detail": _("%(error)s; job #%(id)s is kept: resume it when the queue is back")
            % {"error": job.error, "id": job.pk},
            "job": job.pk,
        }
        return Response(
            body, status=status.HTTP_503_SERVICE_UNAVAILABLE, headers={"Retry-After": str(QUEUE_RETRY_AFTER)}
        )
    return Response(JobOut(job, context={"request": request}).data, status=status.HTTP_201_CREATED)


class FormStart(APIView):
    """Start a job with a page's form (the serializer's ``form_class``): 201 with the job, 400
    naming the field, 409 when the same job is already active."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class: type[FormIn]

    def post(self, request: Request) -> Response:
        data = self.serializer_class(data=request.data)
        data.is_valid(raise_exception=True)
        job = data.form.start(user=request.user)
        return created_response(request, job)


STARTED = {201: JobOut, **BAD, **DENIED, **CONFLICT, **QUEUE_UNAVAILABLE}


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
        job = self.perform(job=generics.get_object_or_404(Job, pk=pk))  # JobStateError: 409
        return Response(JobOut(job, context={"request": request}).data)


class JobCancel(_JobAction):
    perform = staticmethod(job_cancel)


class JobResume(_JobAction):
    perform = staticmethod(job_resume)
