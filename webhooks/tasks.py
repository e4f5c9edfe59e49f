"""The worker's side of webhooks: the ``webhooks.deliver`` task (one attempt of one delivery),
and a sweep in every worker that hands out the retries as they fall due (the jobs sweeper's loop,
jobs.tasks.Sweeper), every NSM_WEBHOOK_SWEEP_SECONDS. Retries wait in the database, not in the
broker: a countdown of two hours would outlast Redis's visibility timeout (config/settings), which
would hand the message out twice."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.db import connection

from jobs.tasks import Sweeper
from webhooks import conf
from webhooks.services import deliveries_hand_out, delivery_attempt

log = logging.getLogger(__name__)


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(delivery_id: int, attempt: int) -> None:
    """Attempt ``attempt`` of the delivery; a duplicate message, or one for an attempt already
    made, does nothing (services.delivery_attempt claims it)."""
    delivery_attempt(delivery_id, attempt)


class DeliverySweeper(Sweeper):
    """Every ``interval`` seconds, publish the attempts that are due (retries, and first attempts
    whose message was lost or whose worker died)."""

    def sweep(self) -> list[int]:  # type: ignore[override]
        try:
            handed = deliveries_hand_out()
            if handed:
                log.info("webhooks: %s due attempts handed out", handed)
        except Exception:  # a database or broker away: try at the next round, never die
            log.warning("the webhooks sweep could not look for due deliveries", exc_info=True)
        finally:
            connection.close()  # this thread's connection, back to the pool between rounds
        return []


_sweeper: DeliverySweeper | None = None


@worker_ready.connect
def start_delivery_sweeper(**kwargs) -> None:
    global _sweeper
    seconds = conf.sweep_seconds()
    if seconds <= 0:
        return  # NSM_WEBHOOK_SWEEP_SECONDS=0: only `manage.py webhooks send-due` sends retries
    _sweeper = DeliverySweeper(seconds)
    _sweeper._thread.name = "webhooks-sweeper"
    _sweeper.start()
    log.info("webhooks sweeper started: due deliveries are handed out every %s s", seconds)


@worker_shutdown.connect
def stop_delivery_sweeper(**kwargs) -> None:
    if _sweeper is not None:
        _sweeper.stop()
