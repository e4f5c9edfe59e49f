"""REST API of the training app (admins only): start a train job."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers

from annotator.models import ItemSet, Round
from jobs.api import STARTED, FormIn, FormStart
from training.forms import TrainForm
from training.train import METHODS


class TrainIn(FormIn):
    """The train form's fields; left out, the page's defaults (TrainParams')."""

    form_class = TrainForm
    scope_fields = ("item_set", "round")

    item_set = serializers.PrimaryKeyRelatedField(
        queryset=ItemSet.objects.all(), required=False, help_text="the resolved gold of its items"
    )
    round = serializers.PrimaryKeyRelatedField(
        queryset=Round.objects.all(), required=False, help_text="the round's gold (and passes)"
    )
    passes = serializers.CharField(
        required=False, max_length=300, help_text="comma-separated: gold, annotator:NAME (default gold)"
    )
    method = serializers.ChoiceField(choices=METHODS, required=False, help_text="default lora")
    base_model = serializers.CharField(
        required=False, allow_blank=True, max_length=250, help_text="lora only (default NSM_PARSER_MODEL)"
    )
    output_dir = serializers.CharField(required=False, allow_blank=True, max_length=250)
    rank = serializers.IntegerField(required=False, min_value=1)
    alpha = serializers.IntegerField(required=False, min_value=1)
    dropout = serializers.FloatField(required=False, min_value=0, max_value=0.99)
    target_modules = serializers.CharField(required=False, allow_blank=True, max_length=300)
    epochs = serializers.IntegerField(required=False, min_value=1)
    learning_rate = serializers.FloatField(required=False, min_value=1e-7, max_value=0.5)
    batch_size = serializers.IntegerField(required=False, min_value=1)
    grad_accum = serializers.IntegerField(required=False, min_value=1)
    max_length = serializers.IntegerField(required=False, min_value=64)
    seed = serializers.IntegerField(required=False, min_value=0)
    gradient_checkpointing = serializers.BooleanField(required=False, default=False)
    parser_name = serializers.CharField(
        required=False, allow_blank=True, max_length=63,
        help_text="the registry name the trained parser gets; empty: METHOD-SCOPE",
    )  # fmt: skip
    labels_from = serializers.CharField(
        required=False, allow_blank=True, max_length=100,
        help_text="classifier only: an item set whose reference labels train through the rules",
    )  # fmt: skip
    encoder = serializers.CharField(
        required=False, allow_blank=True, max_length=250,
        help_text="classifier only: 'bundled' (all-MiniLM-L6-v2) or a model folder",
    )  # fmt: skip
    appraisal_weight = serializers.FloatField(required=False, min_value=0, max_value=10)
    label_trust = serializers.FloatField(required=False, min_value=0.000001, max_value=1)
    label_prior = serializers.FloatField(required=False, min_value=0, max_value=100)
    abstain_below = serializers.CharField(
        required=False, allow_blank=True, max_length=20,
        help_text="classifier only, with labels: 'auto', a share between 0 and 1, or empty (never)",
    )  # fmt: skip


@extend_schema(request=TrainIn, responses=STARTED)
class TrainStart(FormStart):
    """Train a parser (a LoRA adapter or the classifier) on a round's or an item set's gold."""

    serializer_class = TrainIn
