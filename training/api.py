"""REST API of the training app (admins only): start a train job."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers

from annotator.models import ItemSet, Round
from jobs.api import STARTED, FormStart, form_in
from training.forms import TrainForm

TrainIn = form_in(
    TrainForm,
    scope_fields=("item_set", "round"),
    doc="The train form's fields; left out, the page's defaults (TrainParams').",
    item_set=serializers.PrimaryKeyRelatedField(
        queryset=ItemSet.objects.all(), required=False, help_text="the resolved gold of its items"
    ),
    round=serializers.PrimaryKeyRelatedField(
        queryset=Round.objects.all(), required=False, help_text="the round's gold (and passes)"
    ),
)


@extend_schema(request=TrainIn, responses=STARTED)
class TrainStart(FormStart):
    """Train a parser (a LoRA adapter or the classifier) on a round's or an item set's gold."""

    serializer_class = TrainIn
