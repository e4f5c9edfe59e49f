"""The learning queue through the API: read a round's queue (its settings, state and ranked
items, a page at a time), change its settings (a job then computes it), and start a recompute, a
retraining or a simulation. Adjudicators and admins read; admins write. Bodies are JSON only and
typed strictly; an unknown field or a bad value is a 400 naming it, and nothing is written."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotator.api_fields import Text, Whole, read_body
from annotator.filters import MAX_ID
from annotator.models import Round
from annotator.roles import ADJUDICATOR, ADMIN, HasRole
from jobs.models import Job
from learning.jobs import job_queue_start, job_retrain_start, job_simulate_start
from learning.models import QueuePolicy
from learning.selectors import queue_entries, queue_policy, queue_state
from learning.services import queue_policy_set
from nsmcore.queue_orders import ORDERS

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR, ADMIN, message=gettext_lazy("the learning queue is for adjudicators and admins")
)
IsAdmin = HasRole(ADMIN, message=gettext_lazy("only admins change a round's queue"))
MAX_LIMIT = 1000


class QueueQuery(serializers.Serializer):
    """The queue's page: a 25-digit offset overflowed the database's OFFSET (a 500)."""

    offset = serializers.IntegerField(
        min_value=0, max_value=MAX_ID - MAX_LIMIT, default=0, help_text="the first rank listed (default 0)"
    )
    limit = serializers.IntegerField(
        min_value=0,
        max_value=MAX_LIMIT,
        default=100,
        help_text=f"ranks listed (default 100, at most {MAX_LIMIT})",
    )


#: a job of the same kind is already queued or running for the round (jobs.services.JobConflict)
BUSY = OpenApiResponse(description="the same job is already queued or running for this round")


class EntryOut(serializers.Serializer):
    rank = serializers.IntegerField(help_text="0: served first")
    item = serializers.IntegerField(source="item_id")
    source_id = serializers.CharField(source="item.source_id")
    score = serializers.FloatField(help_text="change x (1 + conflict) x (1 + rejected)")
    change = serializers.FloatField(help_text="probability that the routed label changes")
    conflict = serializers.FloatField(help_text="expected share of slots annotators disagree on")
    rejected = serializers.FloatField(help_text="share of the item's lines the verifier rejected")
    label = serializers.CharField(help_text="the label the parser's explication routes to")
    random = serializers.BooleanField(help_text="in the seeded random share")
    weight = serializers.FloatField(help_text="importance weight: N/m in the random share, else 0")
    posteriors = serializers.BooleanField(help_text="the parser gave posteriors (else uniform)")


class QueueOut(serializers.Serializer):
    round = serializers.IntegerField(source="round_id")
    order = serializers.ChoiceField(choices=ORDERS)
    random_share = serializers.FloatField()
    seed = serializers.IntegerField()
    parser = serializers.CharField()
    retrain_every = serializers.IntegerField()
    gold_at_retrain = serializers.IntegerField()
    random_set = serializers.CharField(source="random_set.name", default=None, allow_null=True)
    computed_at = serializers.DateTimeField(allow_null=True)
    computed_with = serializers.CharField()
    job = serializers.IntegerField(source="job_id", allow_null=True)
    stale = serializers.SerializerMethodField()
    entries = serializers.SerializerMethodField()

    def get_stale(self, policy: QueuePolicy) -> bool:
        return queue_state(policy)["stale"]

    @extend_schema(responses=EntryOut(many=True))
    def get_entries(self, policy: QueuePolicy) -> list[dict[str, Any]]:
        offset, limit = self.context.get("offset", 0), self.context.get("limit", 100)
        return EntryOut(queue_entries(policy)[offset : offset + limit], many=True).data


class QueueIn(serializers.Serializer):
    refuses_unknown_fields = True
    order = serializers.ChoiceField(choices=ORDERS)
    random_share = serializers.FloatField(required=False, min_value=0.01, max_value=0.99)
    seed = Whole(required=False, min_value=0, max_value=2**63 - 1)
    parser = Text(required=False, allow_blank=True, max_length=300)
    retrain_every = Whole(required=False, min_value=0, max_value=1_000_000)


class SimulateIn(serializers.Serializer):
    refuses_unknown_fields = True
    seeds = Whole(required=False, min_value=1, max_value=20)
    start = Whole(required=False, min_value=1, max_value=100_000)
    batch = Whole(required=False, min_value=1, max_value=100_000)


class QueueJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    url = serializers.CharField(help_text="the job's API address, to follow its progress")


def _job(job: Job) -> Response:
    return Response(
        QueueJobOut(
            {"id": job.pk, "kind": job.kind, "status": job.status, "url": f"/api/jobs/{job.pk}/"}
        ).data,
        status=status.HTTP_202_ACCEPTED,
    )


class _View(APIView):
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES[:1]  # JSON only (config.parsers)

    def get_permissions(self):
        roles = IsAdjudicatorOrAdmin if self.request.method in ("GET", "HEAD", "OPTIONS") else IsAdmin
        return [IsAuthenticated(), roles()]


class QueueDetail(_View):
    @extend_schema(
        parameters=[QueueQuery],
        responses={
            200: QueueOut,
            400: OpenApiResponse(description="a bad offset or limit, named"),
            404: None,
        },
        description="The round's queue: its settings, whether it is older than the parser's predictions "
        "(stale), and its items by rank. 404 when the round has no queue.",
    )
    def get(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        policy = queue_policy(round_)
        if policy is None:
            return Response(
                {"detail": _("this round has no learning queue")}, status=status.HTTP_404_NOT_FOUND
            )
        query = QueueQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        offset, limit = query.validated_data["offset"], query.validated_data["limit"]
        return Response(QueueOut(policy, context={"offset": offset, "limit": limit}).data)

    @extend_schema(
        request=QueueIn,
        responses={202: QueueJobOut, 409: BUSY},
        description="Set the round's queue (made if absent); a job then computes it. Beyond the schema a "
        "400 names a parser with no predictions for the round's items.",
    )
    def put(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        values = read_body(QueueIn, request)
        if isinstance(values, Response):
            return values
        with transaction.atomic():
            policy = queue_policy_set(round_=round_, user=request.user, **values)
            job = job_queue_start(user=request.user, round_=round_)
            QueuePolicy.objects.filter(pk=policy.pk).update(job=job)
        return _job(job)


class QueueRecompute(_View):
    @extend_schema(
        request=None,
        responses={202: QueueJobOut, 400: OpenApiResponse(description="the round has no queue"), 409: BUSY},
        description="Compute the round's queue again.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        return _job(job_queue_start(user=request.user, round_=get_object_or_404(Round, pk=round_id)))


class QueueRetrain(_View):
    @extend_schema(
        request=None,
        responses={
            202: QueueJobOut,
            400: OpenApiResponse(description="no queue, or no resolved gold"),
            409: BUSY,
        },
        description="Train the CPU parser on the round's gold, prefill the round with it and compute the "
        "queue from its posteriors. 400 when the round has no resolved gold.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        return _job(job_retrain_start(user=request.user, round_=get_object_or_404(Round, pk=round_id)))


class QueueSimulate(_View):
    @extend_schema(
        request=SimulateIn,
        responses={202: QueueJobOut, 409: BUSY},
        description="Simulate random, informative and mixed orders with the round's gold as the oracle; "
        "the job's summary holds the curves. 400 when the round has too little gold.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        values = read_body(SimulateIn, request)
        if isinstance(values, Response):
            return values
        return _job(job_simulate_start(user=request.user, round_=round_, **values))
