"""Quality checks of a round: its settings (control items, the alert, abandoned work, the nudge),
when each assignment was opened and last worked on, the assignments moved back to the pool, and
the nudges shown. Control assignments themselves are ``annotator.Assignment`` rows with
``control`` set."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models import Assignment, Item, Round

RATE_MAX = 0.5  # at most half of a queue made of controls: more is a test, not a round
HOURS_MAX = 24 * 90
NUDGE_SECONDS_MAX = 3_600
MIN_ANSWERED_MAX = 1_000


class QualitySettings(models.Model):
    """A round's quality settings; a round without a row has the defaults (``quality_settings``)."""

    class Measure(models.TextChoices):
        SLOTS = "slots", _("mean per-slot accuracy")
        ROUTED = "routed", _("routed-label accuracy")

    round = models.OneToOneField(Round, on_delete=models.CASCADE, related_name="quality_settings")
    control_source = models.ForeignKey(
        Round,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_("whose resolved gold items are the controls; empty: any other round"),
    )
    control_rate = models.FloatField(
        default=0.0, help_text=_("controls per annotator, as a share of their items in the round")
    )
    threshold = models.FloatField(default=0.7, help_text=_("an annotator below it on controls is alerted"))
    measure = models.CharField(max_length=8, choices=Measure.choices, default=Measure.SLOTS)
    min_answered = models.PositiveIntegerField(
        default=5, help_text=_("answered controls an annotator needs before an alert")
    )
    abandon_hours = models.PositiveIntegerField(
        default=24, help_text=_("an opened assignment idle this long goes back to the pool (0: never)")
    )
    nudge = models.BooleanField(default=False, help_text=_("notice a prefill kept whole too fast"))
    nudge_seconds = models.PositiveIntegerField(
        default=20, help_text=_("a prefill kept whole in less than this is nudged")
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(control_rate__gte=0) & Q(control_rate__lte=RATE_MAX), name="quality_rate_range"
            ),
            models.CheckConstraint(
                condition=Q(threshold__gte=0) & Q(threshold__lte=1), name="quality_threshold_range"
            ),
            models.CheckConstraint(condition=Q(min_answered__gte=1), name="quality_min_answered_positive"),
            models.CheckConstraint(condition=Q(abandon_hours__lte=HOURS_MAX), name="quality_hours_range"),
            models.CheckConstraint(
                condition=Q(nudge_seconds__gte=1) & Q(nudge_seconds__lte=NUDGE_SECONDS_MAX),
                name="quality_nudge_seconds_range",
            ),
            models.CheckConstraint(
                condition=~Q(control_source=models.F("round")), name="quality_source_is_another_round"
            ),
        ]

    def __str__(self) -> str:
        return f"quality settings of round {self.round_id}"


class Opening(models.Model):
    """An annotator's work on an assignment: when they first opened its page and when they last
    showed life on it (opened it again, kept a draft, saved). The sweep reads ``active_at``."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    opened_at = models.DateTimeField()
    active_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "annotator"], name="opening_unique"),
        ]
        indexes = [
            # the sweep: openings idle since before a cutoff
            models.Index(fields=["active_at"], name="opening_active_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id} opened by {self.annotator_id} at {self.opened_at:%Y-%m-%d %H:%M}"


class Move(models.Model):
    """An abandoned assignment given to another member of the pool: who had it, who has it now,
    when, and why (idle since when, against which limit)."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="+")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    from_annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    to_annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    opened_at = models.DateTimeField()
    idle_since = models.DateTimeField()
    hours = models.PositiveIntegerField(help_text=_("the limit it went past"))
    draft_deleted = models.BooleanField(default=False)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("who ran the sweep; empty: the periodic sweep"),
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["round", "-at"], name="move_round_idx")]  # the quality page

    def __str__(self) -> str:
        return f"{self.assignment_id}: {self.from_annotator_id} -> {self.to_annotator_id}"


class Nudge(models.Model):
    """A save that kept all twelve prefilled values in less than the round's nudge time."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="+")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    version = models.PositiveIntegerField(help_text=_("the annotation's version that was saved"))
    time_spent_ms = models.PositiveIntegerField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["round", "annotator"], name="nudge_round_idx")
        ]  # counts per annotator

    def __str__(self) -> str:
        return f"nudge of {self.annotator_id} on {self.assignment_id} ({self.time_spent_ms} ms)"
