from __future__ import annotations

import re

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

NAME_PATTERN = r"[a-z0-9][a-z0-9._-]{0,62}"
NAME_RE = re.compile(NAME_PATTERN)

VERSION_MAX = 2**31 - 1  # the largest PositiveIntegerField on PostgreSQL


class RegisteredParser(models.Model):
    """One version of a named trained parser. The folder is where the worker keeps it; users see
    and choose the name and version (``NAME@VERSION``, or ``NAME`` for the newest)."""

    class Backend(models.TextChoices):
        CLASSIFIER = "classifier", _("classifier (scikit-learn, CPU)")
        TRANSFORMERS = "transformers", _("causal LM with a LoRA adapter")

    name = models.CharField(max_length=63, help_text="lower case letters, digits, '.', '_' and '-'")
    version = models.PositiveIntegerField()  # at most VERSION_MAX
    backend = models.CharField(max_length=20, choices=Backend.choices)
    folder = models.CharField(max_length=500, help_text="the model folder on the worker's disk")
    card = models.JSONField(default=dict, blank=True, help_text="the model's card as it was written")
    #: [source, source_id] of the items it was trained on (gold and labelled): evaluations refuse them
    trained_on = models.JSONField(default=list, blank=True)
    #: how many items it was trained on (len(trained_on)), kept so a list need not load them
    trained_count = models.PositiveIntegerField(default=0)
    #: routed accuracy of its forced choices on labelled texts held back from its training (the
    #: calibration share of an "auto" abstention); None when none were held back
    validation_accuracy = models.FloatField(null=True, blank=True)
    validation_texts = models.PositiveIntegerField(null=True, blank=True)
    job_id = models.PositiveIntegerField(null=True, blank=True, help_text="the train job that made it")
    description = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="registry_parser_name_version"),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="registry_parser_version_from_1"),
        ]

    def __str__(self) -> str:
        return self.spec

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def parser_name(self) -> str:
        """The name its predictions are stored under."""
        return f"{self.backend}:{self.spec}"
