"""The periodic sweep of abandoned work, in every job worker (``manage.py runapp`` and ``serve``
start one): a thread started when the worker is ready, beside the jobs machinery's own sweeper
(jobs.tasks.Sweeper, whose loop it reuses), every NSM_QUALITY_SWEEP_SECONDS (default 600). Two
workers sweeping at once move each assignment once: each move is a conditional update under the
round's lock (quality.abandoned)."""

from __future__ import annotations

import logging

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

from jobs.tasks import Sweeper
from quality.abandoned import abandoned_sweep

log = logging.getLogger(__name__)

DEFAULT_SWEEP_SECONDS = 600


def sweep_seconds() -> int:
    return int(getattr(settings, "NSM_QUALITY_SWEEP_SECONDS", DEFAULT_SWEEP_SECONDS))


class AbandonedSweeper(Sweeper):
    """The jobs sweeper's loop (at start, then every ``interval`` seconds), sweeping abandoned
    assignments instead of stalled jobs."""

    def sweep(self) -> list[int]:  # type: ignore[override]
        try:
            result = abandoned_sweep()
            if result.moved or result.stuck:
                log.info("quality sweep: %s", result.summary())
            return []
        except Exception:  # a database away: try at the next round, never die
            log.warning("the quality sweep could not look for abandoned assignments", exc_info=True)
            return []
        finally:
            connection.close()  # this thread's connection, back to the pool between rounds


_sweeper: AbandonedSweeper | None = None


@worker_ready.connect
def start_abandoned_sweeper(**kwargs) -> None:
    global _sweeper
    seconds = sweep_seconds()
    if seconds <= 0:
        return  # NSM_QUALITY_SWEEP_SECONDS=0: only `manage.py quality sweep` sweeps
    _sweeper = AbandonedSweeper(seconds)
    _sweeper._thread.name = "quality-sweeper"
    _sweeper.start()
    log.info("quality sweeper started: abandoned assignments are looked for every %s s", seconds)


@worker_shutdown.connect
def stop_abandoned_sweeper(**kwargs) -> None:
    if _sweeper is not None:
        _sweeper.stop()
