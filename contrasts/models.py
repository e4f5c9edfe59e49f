"""Minimal pairs (issue 26): an adjudicator rewrites an item's text so that named slots flip, or
so that nothing should change (an invariance pair), and says which label the rewrite should
route to. Pairs live in versioned sets: a set is edited while open, freezing closes it, and a new
version of a frozen set starts as a copy of its pairs."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from annotator.models import Item

NAME_PATTERN = r"[a-z0-9][a-z0-9._-]{0,62}"
#: the family of an invariance pair when none is given
INVARIANCE = "invariance"


class PairSet(models.Model):
    """One version of a named set of pairs. Open (``frozen_at`` empty) while pairs are added;
    frozen, it is what a score or an export names (``NAME@vVERSION``) and never changes."""

    name = models.CharField(max_length=63, help_text="lower case letters, digits, '.', '_' and '-'")
    version = models.PositiveIntegerField(default=1)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    frozen_at = models.DateTimeField(null=True, blank=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="contrasts_set_name_version"),
            models.CheckConstraint(condition=Q(version__gte=1), name="contrasts_set_version_from_1"),
        ]

    def __str__(self) -> str:
        return self.spec

    @property
    def spec(self) -> str:
        return f"{self.name}@v{self.version}"

    @property
    def is_open(self) -> bool:
        return self.frozen_at is None


class MinimalPair(models.Model):
    """x is the source item's text, x' the rewritten ``text``. ``targets`` maps each slot the
    rewrite should flip to ``[from, to]`` (from: the item's gold value, else as given); an
    invariance pair has none, and expects x' to route where x does (its ``expected`` is empty:
    the item's reference label)."""

    pair_set = models.ForeignKey(PairSet, on_delete=models.CASCADE, related_name="pairs")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    text = models.TextField(help_text="the rewritten text x'")
    family = models.CharField(max_length=64, help_text="the edit family, e.g. F1 or invariance")
    targets = models.JSONField(default=dict, blank=True, help_text="slot -> [from, to]")
    invariance = models.BooleanField(default=False, help_text="nothing should change")
    expected = models.CharField(
        max_length=32, blank=True, help_text="the label x' should route to; empty for an invariance pair"
    )
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # a default, not auto_now_add: a new version's copies keep when their pair was written
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pair_set", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(invariance=True, expected="") | (Q(invariance=False) & ~Q(expected=""))),
                name="contrasts_pair_expected_or_invariance",
            ),
        ]

    def __str__(self) -> str:
        return f"pair {self.pk} of {self.pair_set_id}"

    def expected_label(self) -> str:
        """The label x' should route to: the stated one, or for an invariance pair the item's."""
        return self.item.reference_label if self.invariance else self.expected
