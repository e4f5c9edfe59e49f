"""The verifier's judgements of rendered lines against texts."""

from __future__ import annotations

from django.db import models


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
