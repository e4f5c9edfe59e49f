"""Conventions (versioned, voted), gold explications with per-slot provenance, and the audit
trail of every gold change."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_noop

from annotator.models import Item, Round

# The states and kinds the pages show by their stored value, translated there with
# {% translate value %} (and in messages with gettext(value)): marked here for makemessages.
SHOWN_VALUES = (
    gettext_noop("proposed"), gettext_noop("accepted"), gettext_noop("rejected"), gettext_noop("withdrawn"),
    gettext_noop("superseded"), gettext_noop("open"), gettext_noop("resolved"), gettext_noop("unanimous"),
    gettext_noop("convention"), gettext_noop("adjudicated"), gettext_noop("opened"), gettext_noop("rule-set"),
    gettext_noop("active"), gettext_noop("retired"), gettext_noop("initial"), gettext_noop("vote"),
    gettext_noop("admin"), gettext_noop("flow"), gettext_noop("conflict"),
)  # fmt: skip


class Convention(models.Model):
    """One version of a construal convention for a directional conflict on one slot: where
    annotators disagree between ``value_a`` and ``value_b``, the slot takes ``chosen``."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", "proposed"
        ACCEPTED = "accepted", "accepted"
        REJECTED = "rejected", "rejected"
        WITHDRAWN = "withdrawn", "withdrawn"
        SUPERSEDED = "superseded", "superseded by a newer version"

    number = models.PositiveIntegerField(help_text="the convention's id, shared by its versions")
    version = models.PositiveIntegerField(default=1)
    slot = models.CharField(max_length=32)
    value_a = models.CharField(max_length=32)
    value_b = models.CharField(max_length=32)
    chosen = models.CharField(max_length=32)
    rule = models.TextField(help_text="the convention in words, as it will read in the guidelines")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="conventions")
    source = models.JSONField(
        default=dict, blank=True, help_text="where it was proposed from: a flow or a conflict"
    )
    proposer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["number", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["number", "version"], name="convention_unique_version"),
            models.CheckConstraint(condition=~Q(value_a=models.F("value_b")), name="convention_two_values"),
            models.CheckConstraint(
                condition=Q(chosen=models.F("value_a")) | Q(chosen=models.F("value_b")),
                name="convention_chosen_is_a_or_b",
            ),
        ]

    def __str__(self) -> str:
        return f"C{self.number} v{self.version}"

    @property
    def label(self) -> str:
        return f"C{self.number} v{self.version}"


class Vote(models.Model):
    convention = models.ForeignKey(Convention, on_delete=models.CASCADE, related_name="votes")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approve = models.BooleanField()
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["convention", "adjudicator"], name="vote_one_per_adjudicator"),
        ]

    def __str__(self) -> str:
        return f"{'approve' if self.approve else 'reject'} {self.convention_id} by {self.adjudicator_id}"


class GoldItem(models.Model):
    """The gold record of one item: one construal, or two (with the slots that tell them apart)."""

    class Status(models.TextChoices):
        OPEN = "open", "open: some slots unresolved"
        RESOLVED = "resolved", "resolved"

    item = models.OneToOneField(Item, on_delete=models.PROTECT, related_name="gold")
    round = models.ForeignKey(Round, on_delete=models.PROTECT, related_name="gold_items")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    needs_review = models.BooleanField(default=False)
    review_reason = models.CharField(max_length=300, blank=True)
    pivotal_slots = models.JSONField(default=list, blank=True, help_text="slots where two construals differ")
    # gold_sync compares it with the annotations as they stand: a difference marks the record for
    # review, naming who revised, and becomes the new reference
    annotations_seen = models.JSONField(
        default=dict,
        blank=True,
        help_text="annotator id -> version of each annotation of the item, as gold_sync last saw it",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["round", "status"], name="gold_round_status_idx")]

    def __str__(self) -> str:
        return f"gold {self.item_id} ({self.status})"


class GoldConstrual(models.Model):
    """Slots (None while unresolved), per-slot provenance and the routing through the rule set."""

    gold = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="construals")
    index = models.PositiveSmallIntegerField(default=1)
    slots = models.JSONField(help_text="slot -> value, or null while unresolved")
    provenance = models.JSONField(help_text="slot -> unanimous, convention (id, version) or adjudicated (by)")
    residue = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    label = models.CharField(max_length=32, blank=True, help_text="routed label, or ABSTAIN")
    rule = models.PositiveSmallIntegerField(null=True, blank=True)
    fired = models.JSONField(default=list, blank=True)
    abstention = models.CharField(max_length=32, blank=True)
    rule_set_version = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(fields=["gold", "index"], name="construal_unique_index"),
            models.CheckConstraint(condition=Q(index__in=[1, 2]), name="construal_one_or_two"),
        ]

    def __str__(self) -> str:
        return f"construal {self.index} of gold {self.gold_id}"


class GoldChange(models.Model):
    """The audit trail: every change of a gold record, who made it, when, from what, to what, why."""

    gold = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="changes")
    who = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField()
    why = models.TextField()  # the form and the API take up to 5,000 characters

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"change of gold {self.gold_id} at {self.at:%Y-%m-%d %H:%M}: {self.why}"


class AgreementSnapshot(models.Model):
    """Alpha and raw agreement per slot of a round at one version of its annotations, stored by
    the export job (agreement_summary), so that later exports (any process) read it instead of
    recomputing it over every annotation. Pages never write it."""

    round = models.OneToOneField(Round, on_delete=models.CASCADE, related_name="agreement_snapshot")
    version = models.CharField(max_length=100, help_text="the round's annotation signature")
    summary = models.JSONField()
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"agreement of round {self.round_id} at {self.version}"
