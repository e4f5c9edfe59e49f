"""Celery tasks: thin wrappers; the work is in jobs.services so that it can run inline too. And
each worker's sweeper, which resumes the jobs of workers that died."""

from __future__ import annotations

import logging
import threading
from contextlib import suppress

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings
from django.db import OperationalError, connection

from jobs.services import job_give_up, job_run, jobs_resume_stalled

log = logging.getLogger(__name__)

#: a database that cannot be reached is tried again this many times, waiting 5 s, 10 s, 20 s...
#: (at most 5 min, with jitter so that many jobs do not come back at once)
RETRIES = 5
BACKOFF_SECONDS = 5
BACKOFF_MAX_SECONDS = 300


# Acknowledged when the task returns, not when it starts: a worker killed mid-job leaves the
# message unacknowledged, and Redis hands it out again (after visibility_timeout, config/settings/
# base.py); so does a pool child that dies (reject_on_worker_lost). The filesystem broker has no
# acknowledgement (a message is deleted when taken), and neither waits long enough anyway: the
# heartbeat sweeper below resumes a started job within seconds. Running twice is safe: job_run
# claims the row, so a second delivery of a job that is running or done does nothing.
@shared_task(bind=True, name="jobs.run_job", max_retries=RETRIES, acks_late=True, reject_on_worker_lost=True)
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


class Sweeper:
    """A thread in every worker: at start and every NSM_JOB_HEARTBEAT_SECONDS, put the running
    jobs whose heartbeat stopped back in the queue (jobs.services.jobs_resume_stalled), so a
    job whose worker died goes on by itself within seconds, with no beat process to run."""

    def __init__(self, interval: float):
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="job-sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def sweep(self) -> list[int]:
        try:
            return jobs_resume_stalled()
        except Exception:  # a database or broker away: try at the next round, never die
            log.warning("the job sweeper could not look for stalled jobs", exc_info=True)
            return []
        finally:
            connection.close()  # this thread's connection, back to the pool between rounds

    def _loop(self) -> None:
        self.sweep()
        while not self._stop.wait(self.interval):
            self.sweep()


_sweeper: Sweeper | None = None


@worker_ready.connect
def start_sweeper(**kwargs) -> None:
    global _sweeper
    _sweeper = Sweeper(settings.NSM_JOB_HEARTBEAT_SECONDS)
    _sweeper.start()
    log.info("job sweeper started: stalled jobs are resumed every %s s", settings.NSM_JOB_HEARTBEAT_SECONDS)


@worker_shutdown.connect
def stop_sweeper(**kwargs) -> None:
    if _sweeper is not None:
        _sweeper.stop()
