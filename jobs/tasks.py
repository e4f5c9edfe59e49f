"""Celery tasks: thin wrappers; the work is in jobs.services so that it can run inline too."""

from __future__ import annotations

from celery import shared_task

from jobs.services import job_run


@shared_task(name="jobs.run_job")
def run_job(job_id: int) -> None:
    job_run(job_id)
