"""Items, item sets, rounds, assignments, annotations (with every revision) and parser predictions."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from nsmcore.schema import SLOTS


def printable_name(value: str) -> None:
    """A name shown in pages and written into CSV headers and file names: no newline, tab or other
    control character (the services check it too; this is the Django admin's check)."""
    if not value.isprintable():
        raise ValidationError(_("no control characters (newline, tab)"), code="control_character")


SLOT_FIELDS: tuple[str, ...] = tuple(slot.name for slot in SLOTS)
FLAGS: tuple[str, ...] = ("two-construals", "unrecoverable", "out-of-scope")


class Item(models.Model):
    """One event description from a corpus, with its reference label (the prompted emotion)."""

    source = models.CharField(max_length=64, default="crowd-enVent")
    source_id = models.CharField(max_length=128, help_text="the corpus's own id (text_id)")
    text = models.TextField(help_text="the generated text, emotion words included")
    masked_text = models.TextField(blank=True, help_text="the text with emotion words hidden")
    reference_label = models.CharField(max_length=32, help_text="the prompted emotion")
    appraisals = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "source_id"], name="item_unique_source_id"),
        ]
        indexes = [
            # item set drawing stratifies by label
            models.Index(fields=["reference_label"], name="item_label_idx"),
        ]
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.source}:{self.source_id}"

    def text_for(self, field: str) -> str:
        return text_in_field(self.text, self.masked_text, field)


def text_in_field(text: str, masked_text: str, field: str) -> str:
    """The text a round shows in ``field``: the masked text when asked for and present."""
    return masked_text if field == Round.TEXT_MASKED and masked_text else text


class ItemSet(models.Model):
    """A named draw of items (an evidence tier), recording how it was drawn."""

    class Tier(models.TextChoices):
        PILOT = "P", _("P: pilot")
        AUTOMATIC = "A", _("A: automatic full batch")
        SILVER = "S", _("S: silver model-annotator pass")
        HUMAN = "H", _("H: human dual annotation")
        GOLD = "gold", _("gold: adjudicated")
        EVAL = "eval", _("eval: held-out")
        OTHER = "other", _("other")

    name = models.CharField(max_length=100, unique=True, validators=[printable_name])
    tier = models.CharField(max_length=8, choices=Tier.choices, default=Tier.OTHER)
    seed = models.BigIntegerField(null=True, blank=True)
    stratify_by = models.CharField(max_length=32, blank=True, help_text="e.g. reference_label")
    per_stratum = models.PositiveIntegerField(null=True, blank=True)
    size = models.PositiveIntegerField(default=0)
    disjoint_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source_filter = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    items = models.ManyToManyField(Item, through="ItemSetMember", related_name="item_sets")

    def __str__(self) -> str:
        return self.name


class ItemSetMember(models.Model):
    item_set = models.ForeignKey(ItemSet, on_delete=models.CASCADE, related_name="members")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item_set", "item"], name="itemset_member_unique"),
        ]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.item_set_id}#{self.position}"


class Round(models.Model):
    """An annotation round over an item set."""

    TEXT_GENERATED = "text"
    TEXT_MASKED = "masked_text"
    TEXT_FIELDS = [(TEXT_GENERATED, _("generated text")), (TEXT_MASKED, _("emotion-masked text"))]

    class Mode(models.TextChoices):
        PREFILLED = "prefilled", _("prefilled by the parser")
        BLIND = "blind", _("blind (no parser output)")

    class PassKind(models.TextChoices):
        HUMAN = "human", _("human")
        SILVER = "silver", _("silver (model annotator)")

    name = models.CharField(max_length=100, unique=True, validators=[printable_name])
    item_set = models.ForeignKey(ItemSet, on_delete=models.PROTECT, related_name="rounds")
    text_field = models.CharField(max_length=16, choices=TEXT_FIELDS, default=TEXT_MASKED)
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.BLIND)
    annotators_per_item = models.PositiveSmallIntegerField(default=2)
    pool = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="annotation_rounds", blank=True)
    pass_kind = models.CharField(max_length=8, choices=PassKind.choices, default=PassKind.HUMAN)
    show_routed_label = models.BooleanField(
        default=False, help_text="annotators see the label their slots route to (anchors them)"
    )
    prefill_parser = models.CharField(
        max_length=300, blank=True, help_text="parser whose predictions prefill the form"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="round_k_positive"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_blind(self) -> bool:
        return self.mode == self.Mode.BLIND


class Assignment(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        SKIPPED = "skipped"

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    position = models.PositiveIntegerField(help_text="order in the annotator's queue")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    #: a control item (quality app): a resolved gold item of another round mixed into the queue,
    #: looking like any other to its annotator; nothing computed about the round reads it. A
    #: database default too: annotator.queries inserts assignments with SQL that does not name it
    control = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "item", "annotator"], name="assignment_unique"),
        ]
        indexes = [
            # the queue: an annotator's next pending item in a round, and progress counts
            models.Index(fields=["annotator", "round", "status", "position"], name="assignment_queue_idx"),
            # the annotation page: previous / next item and the item's place, whatever their status
            models.Index(fields=["annotator", "round", "position"], name="assignment_order_idx"),
        ]
        ordering = ["position"]

    def __str__(self) -> str:
        return f"{self.round_id}/{self.item_id}/{self.annotator_id}"


class Annotation(models.Model):
    """The current state of one annotator's work on one item; every save that changes it adds a
    revision."""

    #: not stored: whether the annotation_submit that returned it wrote a revision (a submit that
    #: changes nothing writes none)
    changed = True

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="annotation")
    # one column per slot, with the schema's choices
    experiencer = models.CharField(max_length=32)
    trigger = models.CharField(max_length=32)
    agency = models.CharField(max_length=32)
    realization = models.CharField(max_length=32)
    time_direction = models.CharField(max_length=32)
    want = models.CharField(max_length=32)
    evaluation = models.CharField(max_length=32)
    eval_target = models.CharField(max_length=32)
    knowledge = models.CharField(max_length=32)
    others_know = models.CharField(max_length=32)
    body = models.CharField(max_length=32)
    intensity = models.CharField(max_length=32)
    residue = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    flags = models.JSONField(default=list, blank=True)
    prefill = models.JSONField(null=True, blank=True, help_text="the parser explication shown, if any")
    kept_prefill = models.JSONField(default=list, blank=True, help_text="slots left at the prefill")
    time_spent_ms = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"annotation of assignment {self.assignment_id} (v{self.version})"

    def slots(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in SLOT_FIELDS}


class AnnotationDraft(models.Model):
    """What an annotator has chosen on an item and not saved yet, kept on the server as they work
    (annotator.services.draft_save), so that following a link, closing the tab or moving to another
    device loses nothing: the page restores it, saying so, until it is saved or discarded."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    values = models.JSONField(help_text="the slots, residue, notes and flags as the page posted them")
    base_version = models.PositiveIntegerField(help_text="the saved version the page was loaded at")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"draft of {self.assignment_id} at {self.updated_at:%H:%M}"


class AnnotationRevision(models.Model):
    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    slots = models.JSONField()
    residue = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    flags = models.JSONField(default=list)
    kept_prefill = models.JSONField(default=list)
    time_spent_ms = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotation", "version"], name="revision_unique_version"),
        ]
        ordering = ["version"]

    def __str__(self) -> str:
        return f"revision {self.version} of annotation {self.annotation_id}"


class ParserPrediction(models.Model):
    """A parser's output for an item: the explication (None if unreadable), legality, raw output."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="predictions")
    parser = models.CharField(max_length=300)
    parser_version = models.CharField(max_length=100, default="")
    explication = models.JSONField(null=True, blank=True)
    legal = models.BooleanField()
    errors = models.JSONField(default=list, blank=True)
    raw_output = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)
    #: the item's text the parser read (Round.TEXT_FIELDS); empty when not recorded (imported
    #: predictions, or made before fields were recorded). A round reads predictions of its own field.
    text_field = models.CharField(max_length=16, blank=True, default="")
    job = models.ForeignKey(
        "jobs.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="predictions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "parser", "parser_version", "text_field"],
                name="prediction_unique_parser_version_field",
            ),
        ]
        indexes = [
            # prefill looks up the newest prediction of one parser for an item
            models.Index(fields=["item", "parser", "-created_at"], name="prediction_prefill_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.parser} {self.parser_version} on item {self.item_id}"


class ApiToken(models.Model):
    """A user's API key, kept only as its SHA-256 digest: the key is shown once, when made, and a
    copy of the database (a backup, the admin) gives no one a working key. annotator.tokens makes
    and revokes them; annotator.auth.HashedTokenAuthentication reads them."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token")
    digest = models.CharField(max_length=64, unique=True, help_text="sha256 of the key, hex")
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"API token of user {self.user_id}"
