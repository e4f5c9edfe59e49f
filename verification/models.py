"""The verifier's judgements of rendered lines against texts, and people's judgements of the same
lines that calibrate it."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotator.models import Item


class LineVerification(models.Model):
    """The verifier's cache: one NLI judgement of one rendered line against one text, by one
    model at one revision. Verifying again reads these instead of running the model."""

    model = models.CharField(max_length=300, help_text="model id @ revision")
    text_sha = models.CharField(max_length=64)
    line = models.CharField(max_length=300)
    p_entailment = models.FloatField()
    p_neutral = models.FloatField(null=True, blank=True)
    p_contradiction = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # the table it has had since it lived in jobs (moved without a copy)
        db_table = "jobs_lineverification"
        constraints = [
            models.UniqueConstraint(fields=["model", "text_sha", "line"], name="verification_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.line!r}: {self.p_entailment:.2f}"


class EntailmentJudgement(models.Model):
    """A person's reading of whether an item's text (in the field a round shows) entails one
    rendered line: the human side of the verifier's calibration."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    text_field = models.CharField(max_length=16)
    text_sha = models.CharField(max_length=64, help_text="sha256 of the text read, as the verifier caches it")
    slot = models.CharField(max_length=32)
    value = models.CharField(max_length=32)
    line = models.CharField(max_length=300)
    judge = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    entailed = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # the table it has had since it lived in adjudication (moved without a copy)
        db_table = "adjudication_entailmentjudgement"
        constraints = [
            models.UniqueConstraint(
                fields=["item", "text_field", "line", "judge"], name="judgement_one_per_judge"
            ),
        ]
        indexes = [models.Index(fields=["text_sha", "line"], name="judgement_pair_idx")]

    def __str__(self) -> str:
        return f"{self.line!r} {'entailed' if self.entailed else 'not entailed'} by {self.judge_id}"
