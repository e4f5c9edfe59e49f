"""A train job's parser in the registry: registered as the next version of its name, with the
items it was trained on as [source, source_id] pairs (training.train calls it when a model is
written)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.utils.text import slugify

from annotator.models import Item, ItemSet
from jobs.kinds import JobError
from jobs.models import Job
from nsmcore.parsers import trained_item_ids
from registry.models import RegisteredParser
from registry.services import RegistryError, parser_register, validation_of

#: ``params`` below is a training.train.TrainParams (not imported: that module imports this one)
TrainParams = Any


def register_trained(
    job: Job, params: TrainParams, out: Path, card: dict[str, Any], backend: str = "classifier"
) -> Any:
    """The trained parser as the next version of its registry name (a resumed job that already
    registered updates its own version instead of taking another). A LoRA adapter registers as
    the transformers backend, its folder the adapter (its base is named in its config)."""
    written = f"classifier:{out}" if backend == "classifier" else f"transformers:{params.base_model}+{out}"
    trained = qualified_ids(job, params, trained_item_ids(written) or frozenset())
    mine = RegisteredParser.objects.filter(job_id=job.pk).first()
    if mine is not None:
        accuracy, held = validation_of(card)
        RegisteredParser.objects.filter(pk=mine.pk).update(
            folder=str(out.resolve()), card=card, trained_on=trained, trained_count=len(trained),
            validation_accuracy=accuracy, validation_texts=held,
        )  # fmt: skip
        mine.refresh_from_db()
        return mine
    name = params.parser_name or default_parser_name(job, params)
    try:
        return parser_register(
            name=name, backend=backend, folder=out, card=card, trained_on=trained,
            user=job.created_by, job_id=job.pk,
        )  # fmt: skip
    except RegistryError as error:
        raise JobError(str(error)) from None


def qualified_ids(job: Job, params: TrainParams, ids: frozenset[str]) -> list[list[str]]:
    """The trained-on corpus ids as [source, source_id] pairs: items are unique by both, and two
    corpora may share an id. Read from the items of the job's scope and of ``labels_from``."""
    labels = ItemSet.objects.filter(name=params.labels_from).values_list("pk", flat=True)
    sets = [job.item_set_id, *labels]
    pairs = Item.objects.filter(item_sets__in=[s for s in sets if s], source_id__in=ids)
    return sorted({(source, sid) for source, sid in pairs.values_list("source", "source_id")})


def default_parser_name(job: Job, params: TrainParams) -> str:
    scope = job.round.name if job.round_id else job.item_set.name
    return (f"{params.method}-" + (slugify(scope) or "data"))[:63]
