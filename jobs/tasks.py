"""Celery tasks: thin wrappers; the work is in jobs.services so that it can run inline too."""

from __future__ import annotations

from contextlib import suppress

from celery import shared_task
from celery.utils.time import get_exponential_backoff_interval
from django.db import OperationalError

from jobs.services import job_give_up, job_run

#: a database that cannot be reached is tried again this many times, waiting 5 s, 10 s, 20 s...
#: (at most 5 min, with jitter so that many jobs do not come back at once)
RETRIES = 5
BACKOFF_SECONDS = 5
BACKOFF_MAX_SECONDS = 300


@shared_task(bind=True, name="jobs.run_job", max_retries=RETRIES)
def run_job(self, job_id: int) -> None:
    """Run a job of any kind. job_run puts a job whose database went away back in the queue, so a
    retry claims it again and goes on (each kind skips or redoes its work safely)."""
    try:
        job_run(job_id)
    except OperationalError as error:
        tries = self.request.retries
        if tries >= self.max_retries:
            # if it is still away the job shows stalled, and a person can resume it
            with suppress(OperationalError):
                job_give_up(job_id, f"the database could not be reached after {tries + 1} tries: {error}")
            raise
        countdown = get_exponential_backoff_interval(BACKOFF_SECONDS, tries, BACKOFF_MAX_SECONDS, True)
        raise self.retry(exc=error, countdown=countdown) from None
