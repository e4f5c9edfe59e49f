"""The history of exports and the export's cache of verified lines. Both tables keep the names
they had when they lived in the jobs app (moved without a copy)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import Round
from jobs.models import Job


class Export(models.Model):
    """The history of exports: who made which file, when, from what. The file is in
    NSM_EXPORT_DIR; the row is written only once the file is complete. Two kinds share the
    history: the EmoExpl gold archive (exports.export) and a round's raw annotations (exports.raw_export),
    whose rows leave the gold-only columns (lines, verifier, jsonl_sha256 of a CSV) empty."""

    class Kind(models.TextChoices):
        EMOEXPL = "emoexpl", gettext_lazy("EmoExpl gold archive")
        RAW = "raw", gettext_lazy("raw annotations")

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.EMOEXPL)
    job = models.OneToOneField(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="export")
    round = models.ForeignKey(
        Round, null=True, blank=True, on_delete=models.PROTECT, related_name="exports",
        help_text="empty: the whole gold corpus",
    )  # fmt: skip
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    filename = models.CharField(max_length=200)
    bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64, help_text="of the archive")
    jsonl_sha256 = models.CharField(max_length=64)
    records = models.PositiveIntegerField()
    lines = models.PositiveIntegerField(default=0)
    verifier = models.CharField(max_length=400, blank=True, help_text="model @ revision; empty: not verified")
    rule_set_version = models.CharField(max_length=32)
    manifest = models.JSONField()

    class Meta:
        db_table = "jobs_export"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.filename

    @property
    def scope(self) -> str:
        return _("round %(name)s") % {"name": self.round.name} if self.round_id else _("whole gold corpus")

    @property
    def path(self):
        return Path(settings.NSM_EXPORT_DIR) / self.filename

    @property
    def hf_path(self):
        """The archive's Hugging Face datasets folder, zipped beside it (exports.hf); it exists
        only when the export was asked for one."""
        return self.path.with_name(self.path.stem + "-hf.zip")


class VerifiedLines(models.Model):
    """The export's cache: the verified lines of one gold construal as checked by one model at
    one threshold, with its counts. Built from LineVerification (verification app) the first time the
    construal is exported, so a later export reads one short row per construal, in the same query as the
    construal, instead of one row per line. Only each line's probabilities are kept (the JSON
    the record carries, joined by the record separator); the rest of a line record is fixed by
    the rendering. The text and explication it was built for are kept too: when either has
    changed since, the export builds the row again."""

    construal = models.ForeignKey(
        "adjudication.GoldConstrual",
        on_delete=models.CASCADE,
        related_name="verified_lines",
        db_index=False,  # the unique constraint's index starts with it
    )
    model = models.CharField(max_length=300, help_text="model id @ revision")
    threshold = models.FloatField()
    text_sha = models.CharField(
        max_length=64, help_text="sha256 of the premise the lines were checked against"
    )
    slots_key = models.CharField(max_length=64, help_text="sha256 of the explication and its rendered lines")
    scores = models.TextField(help_text="each line's probabilities as exported, joined by U+001E")
    scored = models.PositiveSmallIntegerField()
    entailed = models.PositiveSmallIntegerField()

    class Meta:
        db_table = "jobs_verifiedlines"
        constraints = [
            models.UniqueConstraint(fields=["construal", "model", "threshold"], name="verified_lines_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.entailed}/{self.scored} lines entailed ({self.model})"
