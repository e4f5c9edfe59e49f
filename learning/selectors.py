"""The learning queue's reads: a round's policy and its ranked entries, the newest job of each of
its kinds, and whether the queue is older than the parser's predictions."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from annotator.models import Round
from jobs.models import Job
from learning.models import JOB_KINDS, QueueEntry, QueuePolicy
from learning.services import newest_prediction_at


def queue_policy(round_: Round) -> QueuePolicy | None:
    return QueuePolicy.objects.select_related("random_set", "updated_by").filter(round=round_).first()


def queue_entries(policy: QueuePolicy) -> QuerySet[QueueEntry]:
    return QueueEntry.objects.filter(policy=policy).select_related("item").order_by("rank")


def newest_jobs(round_: Round) -> dict[str, Job | None]:
    jobs = Job.objects.filter(round=round_, kind__in=JOB_KINDS).order_by("-created_at", "-pk")
    out: dict[str, Job | None] = dict.fromkeys(JOB_KINDS)
    for job in jobs[:50]:
        out[job.kind] = out[job.kind] or job
    return out


def queue_state(policy: QueuePolicy) -> dict[str, Any]:
    """What the page says of the queue: computed when and with what, and stale when the parser
    has newer predictions than the last computation."""
    newest = newest_prediction_at(policy)
    stale = policy.computed_at is None or (newest is not None and newest > policy.computed_at)
    entries = QueueEntry.objects.filter(policy=policy)
    return {
        "computed": policy.computed_at is not None,
        "stale": stale,
        "entries": entries.count(),
        "random": entries.filter(random=True).count(),
    }
