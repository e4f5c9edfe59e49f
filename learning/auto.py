"""A round that retrains by itself: when a gold item of a round whose queue retrains every N gold
items is saved resolved, and N more are resolved than at the last retraining, a retrain job is
started (after the save commits; one at a time: an active one is left to finish)."""

from __future__ import annotations

from django.db import transaction

from jobs.services import JobConflict
from learning.jobs import job_retrain_start
from learning.models import QueuePolicy
from learning.services import resolved_gold


def retrain_if_due(round_id: int) -> bool:
    """Start the round's retrain job if N new gold items are resolved since the last one."""
    policy = QueuePolicy.objects.select_related("round", "updated_by").filter(round_id=round_id).first()
    if policy is None or not policy.retrain_every:
        return False
    if resolved_gold(policy.round) - policy.gold_at_retrain < policy.retrain_every:
        return False
    try:
        job = job_retrain_start(user=policy.updated_by, round_=policy.round, trigger="auto")
    except JobConflict:
        return False  # one is under way; the next resolved item asks again
    QueuePolicy.objects.filter(pk=policy.pk).update(job=job)
    return True


def retrain_after_commit(round_id: int) -> None:
    """Once the save of a resolved gold item of the round commits, start its retraining if due
    (learning.apps.gold_saved calls it for each such save)."""
    transaction.on_commit(lambda: retrain_if_due(round_id))
