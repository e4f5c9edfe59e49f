from django.apps import AppConfig


class LearningConfig(AppConfig):
    """The learning queue (issue 27): the order in which a round serves its items (random, most
    informative, or mixed with a seeded random share carrying importance weights), recomputed when
    the parser is retrained, and a round's automatic retraining every N new gold items."""

    name = "learning"
    verbose_name = "Learning queue"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from adjudication.models import GoldItem
        from learning import jobs  # noqa: F401  (registers the queue, retrain and simulate kinds)
        from learning.auto import on_gold_saved

        post_save.connect(on_gold_saved, sender=GoldItem, dispatch_uid="learning-retrain-if-due")
