"""A running job's heartbeat: how the others know its worker is alive.

The run that claimed a job (jobs.services.job_run) writes ``Job.heartbeat_at`` every
NSM_JOB_HEARTBEAT_SECONDS from a thread of its own, so a batch that takes minutes (a large model,
a slow server) still beats, and a worker that dies stops beating at once. A beat is a conditional
update on the run's own token (``Job.runner``): when it matches no row, the job is no longer this
run's (a sweeper gave it to another worker after missed beats, or it ended), and the run stops at
its next batch instead of working beside the new one (jobs.services.job_stopped).

Each beat borrows a database connection and gives it back, so the beating threads of a worker
never hold more of a bounded pool (config/settings/prod.py) than the moment of the write."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid

from django.db import DatabaseError, connection
from django.utils import timezone

from jobs.models import Job

log = logging.getLogger(__name__)

_current = threading.local()


def runner_name() -> str:
    """A token naming one run of a job, readable where it ran: host/pid/random."""
    return f"{socket.gethostname()[:60]}/{os.getpid()}/{uuid.uuid4().hex[:12]}"


class Heartbeat:
    """Beats for one run of one job until stopped; ``lost`` once the job is not this run's."""

    def __init__(self, job_id: int, runner: str, *, interval: float):
        self.job_id = job_id
        self.runner = runner
        self.interval = interval
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"job-{job_id}-heartbeat", daemon=True)

    def beat(self) -> None:
        """One write of the heartbeat; a database that cannot be reached is tried at the next beat
        (if it stays away long enough, the job is stalled, which is the truth)."""
        try:
            held = Job.objects.filter(pk=self.job_id, status=Job.Status.RUNNING, runner=self.runner).update(
                heartbeat_at=timezone.now()
            )
        except DatabaseError:
            log.warning("job %s: could not write its heartbeat", self.job_id, exc_info=True)
            return
        finally:
            connection.close()  # this thread's connection, back to the pool between beats
        if not held and not self.lost:
            log.warning("job %s: no longer held by %s; it stops at its next batch", self.job_id, self.runner)
            self.lost = True

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.beat()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        _current.beat = self
        return self

    def __exit__(self, *exc) -> None:
        _current.beat = None
        self._stop.set()
        # a beat under way finishes by itself; the job's end does not wait for a slow database
        self._thread.join(timeout=1)


def heartbeat_lost(job_id: int) -> bool:
    """Whether the run of ``job_id`` in this thread has lost the job to another run."""
    beat = getattr(_current, "beat", None)
    return beat is not None and beat.job_id == job_id and beat.lost
