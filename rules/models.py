"""Rule set versions (SPEC section 9): every version the team has proposed, which one is active,
the votes on each proposal and the history of activations."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class RuleSetVersion(models.Model):
    """One version of the mapper's rule set, stored as the JSON document nsmcore reads."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", _("proposed")
        ACTIVE = "active", _("active")
        RETIRED = "retired", _("retired (was active)")
        REJECTED = "rejected", _("rejected by vote")
        WITHDRAWN = "withdrawn", _("withdrawn")

    version = models.CharField(max_length=32, unique=True)
    document = models.JSONField(help_text="the rule set as nsmcore reads it (version, description, rules)")
    content_hash = models.CharField(
        max_length=64, unique=True, help_text="sha256 of the rules alone: two versions never say the same"
    )
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    note = models.TextField(blank=True, help_text="what the revision changes and why")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    ballot = models.PositiveIntegerField(
        default=1, help_text="how many times it has been put to the vote (a rollback puts it again)"
    )
    report = models.JSONField(default=dict, blank=True, help_text="the regression report at proposal")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["status"], condition=Q(status="active"), name="ruleset_one_active"
            ),
        ]

    def __str__(self) -> str:
        return f"rule set v{self.version} ({self.status})"

    @property
    def suite_ok(self) -> bool:
        return bool(self.report.get("ok"))


class RuleSetActivation(models.Model):
    """The history: each time a version became active, how, by whom, and what re-routing did."""

    class How(models.TextChoices):
        INITIAL = "initial", _("initial (the packaged default)")
        VOTE = "vote", _("adjudicators' vote")
        ADMIN = "admin", _("admin")

    version = models.ForeignKey(RuleSetVersion, on_delete=models.PROTECT, related_name="activations")
    previous = models.ForeignKey(
        RuleSetVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    how = models.CharField(max_length=16, choices=How.choices)
    rerouted = models.PositiveIntegerField(default=0, help_text="gold construals routed again")
    changed = models.PositiveIntegerField(default=0, help_text="of those, how many changed label")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"v{self.version_id} activated ({self.how}) at {self.at:%Y-%m-%d %H:%M}"


class RuleSetVote(models.Model):
    """An adjudicator's vote on activating a version, in one ballot of it."""

    version = models.ForeignKey(RuleSetVersion, on_delete=models.CASCADE, related_name="votes")
    ballot = models.PositiveIntegerField(default=1)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approve = models.BooleanField()
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "ballot", "adjudicator"], name="ruleset_vote_one_per_adjudicator"
            ),
        ]

    def __str__(self) -> str:
        return f"{'approve' if self.approve else 'reject'} v{self.version_id} by {self.adjudicator_id}"
