"""Prefill jobs: every item of an item set (or a round) that has no prediction from a parser yet is
parsed, batch by batch, and its prediction stored. Running it again adds nothing; a resumed job
goes on where it stopped; ``overwrite`` parses everything again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import Item, ItemSet, ItemSetMember, ParserPrediction, Round
from jobs.kinds import JobError, JobKind, Params, job_kind_register
from jobs.models import Job
from jobs.services import job_create, job_stopped
from nsmcore.parsers import BACKENDS, Parser, ParserUnavailable
from predictions.parsers import (
    default_prefill,
    model_backend,
    parser_build,
    parser_setting_problem,
    resolved_model,
)
from predictions.selectors import legality_report

PREFILL = "prefill"
TEXT_FIELDS = (Round.TEXT_GENERATED, Round.TEXT_MASKED)
MODES = ("", "schema", "free")

#: how the worker builds the job's parser, from its backend, model and mode. Tests put a parser of
#: their own here (monkeypatch ``predictions.prefill.parser_factory``).
parser_factory: Callable[..., Parser] = parser_build


@dataclass(frozen=True)
class PrefillParams(Params):
    backend: str
    text_field: str
    model: str = ""
    mode: str = ""
    overwrite: bool = False
    #: transformers only: a LoRA adapter folder over the model (empty: NSM_PARSER_ADAPTER when the
    #: model is the setting's, else none)
    adapter: str = ""

    def validate(self) -> None:
        if self.backend not in BACKENDS:
            self.bad(
                "backend",
                _("unknown parser backend %(backend)s; backends: %(backends)s")
                % {"backend": repr(self.backend), "backends": ", ".join(BACKENDS)},
            )
        if self.text_field not in TEXT_FIELDS:
            fields = ", ".join(TEXT_FIELDS)
            self.bad(
                "text_field",
                _("unknown text field %(field)s; fields: %(fields)s")
                % {"field": repr(self.text_field), "fields": fields},
            )
        if self.mode not in MODES:
            self.bad(
                "mode",
                _("unknown mode %(mode)s; modes: schema, free (or empty: the setting)")
                % {"mode": repr(self.mode)},
            )
        if self.adapter and self.backend != "transformers":
            self.bad(
                "adapter",
                _("an adapter is for the transformers backend, not %(backend)s") % {"backend": self.backend},
            )


def job_prefill_start(
    *,
    user,
    item_set: ItemSet | None = None,
    round_: Round | None = None,
    backend: str = "",
    model: str = "",
    mode: str = "",
    text_field: str = "",
    overwrite: bool = False,
    adapter: str = "",
    enqueue: bool = True,
) -> Job:
    """Create a prefill job for an item set or a round and hand it to the worker (after commit).
    A round's items are read in the round's text field; an item set's in ``text_field``. With no
    backend, the best registered parser (else the settings' backend) prefills."""
    if (item_set is None) == (round_ is None):
        raise JobError(_("choose an item set or a round, not both"))
    if not backend:  # a registered parser's own backend, else the settings'
        backend, model = default_prefill() if not model else (model_backend(model), model)
    model = resolved_model(backend, model)
    if round_ is not None:
        item_set = round_.item_set
        text_field = round_.text_field
    params = PrefillParams(
        backend=backend,
        # the masked text unless asked: the generated text names the emotion (a parser reading it
        # prefills from the answer); a round's items are read in the round's own field
        text_field=text_field or Round.TEXT_MASKED,
        model=model,
        mode=mode,
        overwrite=overwrite,
        adapter=adapter,
    )
    problem = parser_setting_problem(params.backend, model)
    if problem:
        raise JobError(
            _("the %(backend)s parser cannot run: %(problem)s")
            % {"backend": params.backend, "problem": problem}
        )
    if adapter and not (Path(adapter).expanduser() / "adapter_config.json").is_file():
        raise JobError(
            _("prefill job parameter 'adapter': no LoRA adapter at %(adapter)s (no adapter_config.json)")
            % {"adapter": adapter}
        )
    total = ItemSetMember.objects.filter(item_set=item_set).count()
    if not total:
        raise JobError(_("item set %(name)s has no items") % {"name": item_set.name})
    key = f"{params.backend}|{model}|{mode}|{params.text_field}" + (f"|{adapter}" if adapter else "")
    return job_create(
        PREFILL, user=user, item_set=item_set, round_=round_, key=key,
        params=params, total=total, enqueue=enqueue,
    )  # fmt: skip


def run_prefill(job: Job, params: PrefillParams) -> bool:
    """Parse every item of the scope that has no prediction of this parser yet, batch by batch;
    False when cancelled."""
    parser = parser_factory(
        backend=params.backend, model=params.model, mode=params.mode, adapter=params.adapter
    )
    Job.objects.filter(pk=job.pk).update(engine=parser.name, engine_version=parser.version)
    if job.round_id and job.round.mode == Round.Mode.PREFILLED and job.round.prefill_parser != parser.name:
        # the round's forms read this parser's predictions, item by item as they arrive
        Round.objects.filter(pk=job.round_id).update(prefill_parser=parser.name)

    item_ids = list(
        ItemSetMember.objects.filter(item_set_id=job.item_set_id)
        .order_by("position")
        .values_list("item_id", flat=True)
    )
    # a prediction is of one parser version reading one text field: another field's are others
    existing = ParserPrediction.objects.filter(
        item_id__in=ItemSetMember.objects.filter(item_set_id=job.item_set_id).values("item_id"),
        parser=parser.name,
        parser_version=parser.version,
        text_field=params.text_field,
    )
    # this job's own predictions (a resumed run's earlier batches) are done, never skipped nor
    # parsed again, overwrite or not; another job's are skipped, unless this one overwrites them
    mine = set(existing.filter(job_id=job.pk).values_list("item_id", flat=True))
    others = (
        set() if params.overwrite else set(existing.exclude(job_id=job.pk).values_list("item_id", flat=True))
    )
    have = mine | others
    todo = [i for i in item_ids if i not in have]
    Job.objects.filter(pk=job.pk).update(skipped=len(others), done=len(have), legal=0, illegal=0)

    size = max(1, settings.NSM_JOB_BATCH_SIZE)
    for start in range(0, len(todo), size):
        if job_stopped(job.pk):
            return False
        batch = todo[start : start + size]
        items = Item.objects.in_bulk(batch)
        texts = [items[i].text_for(params.text_field) for i in batch]
        results = parser.parse(texts)
        rows = [
            ParserPrediction(
                item_id=item_id,
                parser=parser.name,
                parser_version=parser.version,
                explication=r.explication.as_dict() if r.explication else None,
                legal=r.legal,
                errors=[p.as_dict() for p in r.errors],
                raw_output=r.raw_output,
                seconds=r.seconds,
                text_field=params.text_field,
                job_id=job.pk,
            )
            for item_id, r in zip(batch, results, strict=True)
        ]
        legal = sum(r.legal for r in results)
        with transaction.atomic():
            if params.overwrite:  # another job's reading of these items gives way to this one's
                existing.filter(item_id__in=batch).delete()
            ParserPrediction.objects.bulk_create(rows, ignore_conflicts=True)
            Job.objects.filter(pk=job.pk).update(
                done=F("done") + len(batch),
                legal=F("legal") + legal,
                illegal=F("illegal") + len(batch) - legal,
            )
    return True


def describe_prefill(job: Job, params: PrefillParams) -> str:
    parser = format_html(_("parser <code>{}</code>"), job.engine or params.backend)
    if job.engine_version:
        parser = format_html(_("{} version <code>{}</code>"), parser, job.engine_version)
    elif params.model:
        parser = format_html(_("{} · model <code>{}</code>"), parser, params.model)
    if params.adapter and not job.engine:
        parser = format_html(_("{} · adapter <code>{}</code>"), parser, params.adapter)
    if params.mode:
        parser = format_html(_("{} · {} decoding"), parser, params.mode)
    extra = " · " + _("overwrites earlier predictions") if params.overwrite else ""
    return format_html(_("{} · reads {}{}"), parser, params.text_field, extra)


def kept_prefill(job: Job) -> str:
    if not job.parsed:
        return ""
    return f"{job.parsed} items parsed before the failure are kept; resume to go on"


def prefill_resume_problem(job: Job, params: PrefillParams) -> str | None:
    """What the start refuses a prefill for, asked again when it would resume (a setting or a
    registered parser may have gone since)."""
    problem = parser_setting_problem(params.backend, params.model)
    if problem:
        return _("the %(backend)s parser cannot run: %(problem)s") % {
            "backend": params.backend,
            "problem": problem,
        }
    if params.adapter and not (Path(params.adapter).expanduser() / "adapter_config.json").is_file():
        return _("no LoRA adapter at %(adapter)s any more (no adapter_config.json)") % {
            "adapter": params.adapter
        }
    return None


def prefill_status_context(job: Job) -> dict[str, Any]:
    """A finished prefill's legality report (predictions.selectors)."""
    return {"report": None if job.is_active else legality_report(job)}


job_kind_register(
    JobKind(
        name=PREFILL,
        label=gettext_lazy("parser prefill"),
        params=PrefillParams,
        run=run_prefill,
        describe=describe_prefill,
        expected=(ParserUnavailable,),
        kept=kept_prefill,
        status_template="predictions/_status_prefill.html",
        status_context=prefill_status_context,
        resume_problem=prefill_resume_problem,
        form="predictions.forms.PrefillForm",
        form_template="predictions/_prefill_form.html",
    )
)
