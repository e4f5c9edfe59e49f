"""Reads for the job pages."""

from __future__ import annotations

from django.db.models import QuerySet

from jobs.models import Job


def jobs_recent(limit: int = 50) -> QuerySet[Job]:
    return Job.objects.select_related("item_set", "round", "created_by")[:limit]
