"""REST API of the training app (admins only): start a train job."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema

from jobs.api import STARTED, FormStart, form_in
from training.defaults import default_train_method
from training.forms import TrainForm

_TrainIn = form_in(
    TrainForm,
    scope=("the resolved gold of its items", "the round's gold (and passes)"),
    doc="The train form's fields; left out, the page's defaults (TrainParams'). With no method, a "
    "base_model given means lora, as on the command line; else the machine's default (NSM_TRAIN_METHOD).",
)


class TrainIn(_TrainIn):
    __doc__ = _TrainIn.__doc__

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if "method" not in data:  # as the command line: a base model given means lora
            data = {**data, "method": default_train_method(data.get("base_model", ""))}
        return super().validate(data)


@extend_schema(request=TrainIn, responses=STARTED)
class TrainStart(FormStart):
    """Train a parser (a LoRA adapter or the classifier) on a round's or an item set's gold."""

    serializer_class = TrainIn
