from django.apps import AppConfig


class QualityConfig(AppConfig):
    """Quality checks (issue 27): control items with gold mixed into a round, per-annotator
    accuracy on them with an alert, abandoned assignments back to the pool, and a nudge when a
    prefill is kept whole too fast."""

    name = "quality"
    verbose_name = "Quality checks"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from annotator.models import AnnotationDraft
        from annotator.signals import annotation_submitted
        from quality import (
            receivers,
            tasks,  # noqa: F401  (the worker's periodic sweep)
        )

        annotation_submitted.connect(receivers.on_submitted, dispatch_uid="quality-nudge")
        post_save.connect(receivers.on_draft_saved, sender=AnnotationDraft, dispatch_uid="quality-draft")
