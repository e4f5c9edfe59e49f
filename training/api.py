"""REST API of the training app (admins only): start a train job."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema

from jobs.api import STARTED, FormStart, form_in
from training.forms import TrainForm

TrainIn = form_in(
    TrainForm,
    scope=("the resolved gold of its items", "the round's gold (and passes)"),
    doc="The train form's fields; left out, the page's defaults (TrainParams').",
)


@extend_schema(request=TrainIn, responses=STARTED)
class TrainStart(FormStart):
    """Train a parser (a LoRA adapter or the classifier) on a round's or an item set's gold."""

    serializer_class = TrainIn
