"""What the quality checks listen to: a draft kept (activity on an opened assignment), and a
submit saved (the nudge). A save needs no activity of its own: the sweep moves only assignments
with no annotation, so a saved one is never abandoned whatever its opening says. Connected in
QualityConfig.ready; annotator sends the last (annotator.signals) and knows nothing of this app.
An opening is posted by the annotation page itself once loaded (quality.views.opening), so no GET
writes."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest
from django.utils.translation import gettext as _

from annotator.models import Annotation, AnnotationDraft, Assignment
from quality.abandoned import activity_touch
from quality.services import nudge_check


def on_draft_saved(sender: Any, instance: AnnotationDraft, **kwargs: Any) -> None:
    activity_touch(assignment_id=instance.assignment_id)


def on_submitted(
    sender: Any, *, assignment: Assignment, annotation: Annotation, request: HttpRequest | None = None,
    **kwargs: Any,
) -> None:  # fmt: skip
    nudge = nudge_check(assignment=assignment, annotation=annotation)
    if nudge is not None and request is not None:
        messages.info(
            request,
            _(
                "You kept every prefilled value in %(seconds)s s. That can be right; please check "
                "each slot against the text before moving on, the parser is often wrong."
            )
            % {"seconds": max(1, round(nudge.time_spent_ms / 1000))},
            extra_tags="quality-nudge",
        )
