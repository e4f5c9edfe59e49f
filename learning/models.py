from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models import Item, ItemSet, Round
from nsmcore.queue_orders import DEFAULT_RANDOM_SHARE, INFORMATIVE, MIXED, RANDOM

# The job kinds of this app (learning.jobs runs them): named here, where the app's ready() reads
# them without loading the jobs' code and the numpy it brings
QUEUE, RETRAIN, SIMULATE = "ranking", "retrain", "simulate"
JOB_KINDS = (QUEUE, RETRAIN, SIMULATE)


class QueuePolicy(models.Model):
    """How a round orders its items (nsmcore.queue): the order, the seeded random share, the
    parser whose posteriors rank them, and whether the round retrains that parser by itself."""

    class Order(models.TextChoices):
        RANDOM = RANDOM, _("random")
        INFORMATIVE = INFORMATIVE, _("most informative")
        MIXED = MIXED, _("mixed (a random share in the informative order)")

    round = models.OneToOneField(Round, on_delete=models.CASCADE, related_name="queue_policy")
    order = models.CharField(max_length=16, choices=Order.choices, default=Order.MIXED)
    random_share = models.FloatField(
        default=DEFAULT_RANDOM_SHARE, help_text=_("the share of a mixed queue drawn at random")
    )
    seed = models.BigIntegerField(default=0)
    parser = models.CharField(
        max_length=300,
        blank=True,
        help_text=_("whose posteriors rank the items (empty: prefill parser, else newest)"),
    )
    retrain_every = models.PositiveIntegerField(
        default=0, help_text=_("retrain the parser after this many new gold items (0: never)")
    )
    gold_at_retrain = models.PositiveIntegerField(
        default=0, help_text=_("resolved gold items of the round when it was last retrained")
    )
    #: the items of the random share, as an item set: the evaluation and agreement pages read it
    random_set = models.ForeignKey(
        ItemSet, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    computed_at = models.DateTimeField(null=True, blank=True)
    computed_with = models.CharField(max_length=420, blank=True, help_text=_("parser name and version"))
    #: the job (retrain or recompute) now under way for this queue, if any
    job = models.ForeignKey("jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(random_share__gt=0) & Q(random_share__lt=1), name="queue_share_between_0_and_1"
            ),
        ]

    def __str__(self) -> str:
        return f"queue of round {self.round_id} ({self.order})"


class QueueEntry(models.Model):
    """One item's place in its round's queue and the parts of its score."""

    policy = models.ForeignKey(QueuePolicy, on_delete=models.CASCADE, related_name="entries")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField()
    score = models.FloatField()
    change = models.FloatField(help_text=_("probability that the routed label changes"))
    conflict = models.FloatField(help_text=_("expected share of slots annotators disagree on"))
    rejected = models.FloatField(help_text=_("share of the item's lines the verifier rejected"))
    label = models.CharField(max_length=32)
    random = models.BooleanField(help_text=_("in the seeded random share"))
    weight = models.FloatField(help_text=_("importance weight: N/m in the random share, else 0"))
    posteriors = models.BooleanField(help_text=_("whether the parser gave posteriors for the item"))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["policy", "item"], name="queue_entry_unique")]
        # the queue page lists a round's entries by rank
        indexes = [models.Index(fields=["policy", "rank"], name="queue_entry_rank_idx")]
        ordering = ["rank"]

    def __str__(self) -> str:
        return f"{self.item_id} at {self.rank}"
