from typing import Any

from django.apps import AppConfig


def gold_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    """A resolved gold item may start its round's retraining (learning.auto). That module and the
    queue's code it brings (numpy, the retrain kind) load with the first resolved item saved, not in
    every process at start: the job worker at rest holds none of it (issue 24's memory goal)."""
    if instance.status == instance.Status.RESOLVED:
        from learning.auto import retrain_after_commit

        retrain_after_commit(instance.round_id)


class LearningConfig(AppConfig):
    """The learning queue (issue 27): the order in which a round serves its items (random, most
    informative, or mixed with a seeded random share carrying importance weights), recomputed when
    the parser is retrained, and a round's automatic retraining every N new gold items."""

    name = "learning"
    verbose_name = "Learning queue"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from adjudication.models import GoldItem
        from jobs.kinds import job_kind_module
        from learning.models import JOB_KINDS

        for kind in JOB_KINDS:
            job_kind_module(kind, "learning.jobs")
        post_save.connect(gold_saved, sender=GoldItem, dispatch_uid="learning-retrain-if-due")
