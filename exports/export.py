"""The EmoExpl export job: the resolved gold corpus (or one round's) as JSONL, one record per item,
with per-line verification metadata, beside a manifest, a dataset card and the record's JSON
Schema, in one deterministic zip (SPEC section 8 step 7; layout in ``nsmcore.emoexpl``).

The records come from ``exports.records`` batch by batch; this module starts the job, writes
the archive and its manifest, and keeps the history. The archive is renamed into place only when
complete, and its history row is written then; a worker killed mid-export leaves only a hidden
temporary file that the re-run removes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import nsmcore
from adjudication.agreement.analysis import agreement_snapshot_save, agreement_summary
from adjudication.gold.services import gold_sync
from adjudication.models import Convention, GoldChange, GoldItem
from annotator.events import event_send
from annotator.models import Assignment, ItemSet, Round
from contrasts.split import CONTRAST_NAME, export_split
from exports.models import Export
from exports.recipe import as_of_now, recipe_for_export
from exports.records import Encodings, Tally, TierLists, batch_records, gold_batches
from jobs.kinds import JobError, JobKind, Params, job_kind_register
from jobs.models import Job
from jobs.services import job_create, job_stopped
from nsmcore import emoexpl
from nsmcore.verifier import Verifier, VerifierUnavailable
from rules.rulesets import active_rule_set
from verification.verify import WITHOUT_VERIFICATION, verifier_available, verifier_build

SCHEMA_NAME = "record.schema.json"
EXPORT = "export"
#: what runs on a finished archive before its history row is written: (job, params, archive path).
#: exports.hf adds the Hugging Face datasets folder (when params.hf), without this module importing it
ARCHIVE_STEPS: list[Callable[[Job, ExportParams, Path], None]] = []


@dataclass(frozen=True)
class ExportParams(Params):
    #: check every line with an NLI model; without, lines carry no entailment judgement
    verify: bool
    #: the NLI model asked for (a name or a local path; empty when not verifying)
    model: str = ""
    #: also write a Hugging Face datasets folder, zipped beside the archive (exports.hf)
    hf: bool = False

    def to_json(self) -> dict[str, Any]:
        # hf stored only when asked for: an export without the folder keeps the parameters it had
        return {k: v for k, v in super().to_json().items() if k != "hf" or v}

    def validate(self) -> None:
        if self.model and not self.verify:
            self.bad(
                "model", _("%(model)s given for an export without verification") % {"model": repr(self.model)}
            )


def export_start(
    *, user, round_: Round | None = None, model: str = "", verify: bool = True, enqueue: bool = True,
    hf: bool = False,
) -> Job:  # fmt: skip
    """Create an export job for the whole gold corpus or one round's gold. With ``verify``, a
    model that cannot be there (no folder, a hub name not cached) is refused before the job
    exists; one that cannot be loaded fails the job, at once. Without ``verify``, lines carry no
    entailment judgement and the manifest says so."""
    if verify:
        try:
            model = verifier_available(model)
        except VerifierUnavailable as error:
            raise JobError(f"{error}, {WITHOUT_VERIFICATION}") from None
    else:
        model = ""
    gold = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED)
    if round_ is not None:
        gold = gold.filter(round=round_)
    if not gold.exists() and not _unsynced_rounds(round_):
        if round_ is not None:
            raise JobError(
                _("round %(name)s has no resolved gold item yet: nothing to export") % {"name": round_.name}
            )
        raise JobError(_("any round has no resolved gold item yet: nothing to export"))
    return job_create(
        EXPORT, user=user, item_set=None, round_=round_, key=f"export|{model or '-'}",
        params=ExportParams(verify=verify, model=model, hf=hf), enqueue=enqueue,
    )  # fmt: skip


def _rounds(round_: Round | None) -> list[Round]:
    return [round_] if round_ is not None else list(Round.objects.order_by("pk"))


def _unsynced_rounds(round_: Round | None) -> bool:
    """Whether some round in scope has submitted work that may open gold on sync."""
    done = Assignment.objects.filter(status=Assignment.Status.DONE)
    return (done.filter(round=round_) if round_ else done).exists()


def _agreement(rounds: list[Round]) -> dict[str, Any]:
    """Alpha and raw agreement per slot of every round in scope with two or more annotators."""
    out = {}
    for round_ in rounds:
        summary = agreement_summary(round_)
        if summary["coders"] >= 2:
            out[round_.name] = summary
    return out


def _conventions(rounds: list[Round]) -> list[dict[str, Any]]:
    accepted = Convention.objects.filter(round__in=rounds, status=Convention.Status.ACCEPTED).order_by(
        "number", "version"
    )
    return [
        {
            "label": c.label, "number": c.number, "version": c.version, "slot": c.slot,
            "value_a": c.value_a, "value_b": c.value_b, "chosen": c.chosen, "rule": c.rule,
        }
        for c in accepted
    ]  # fmt: skip


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "round"


Progress = Callable[[int], None]


def export_prepare(round_: Round | None) -> None:
    """The export's writes, named and before it reads: open the gold records of every round in scope
    whose annotations are all in (gold_sync), and store each round's agreement snapshot, so that
    the archive holds every resolved item and a later export reads the agreement instead of
    computing it."""
    for r in _rounds(round_):
        gold_sync(r)
        agreement_snapshot_save(r)


def export_write(
    *, round_: Round | None, verifier: Verifier | None, folder: Path, tag: str,
    progress: Progress = lambda n: None, stopped: Callable[[], bool] = lambda: False,
    total: Callable[[int], None] = lambda n: None,
) -> tuple[Path, dict[str, Any]] | None:  # fmt: skip
    """Write the archive of the gold in ``folder``; returns (path, manifest), or None when stopped.
    Reads the gold, the rounds and the agreement only (opening gold records and storing the
    agreement are export_prepare's, before it): the same database (and verifier cache) always
    gives the same bytes. With a verifier it also writes what verifying costs to redo: the
    verifier's cache of line judgements (LineVerification) and each record's verified lines
    (VerifiedLines), neither of which changes what is exported."""
    read_at = as_of_now()  # the recipe's moment: exports.replay rebuilds the history as of it
    rounds = _rounds(round_)
    gold = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED)
    if round_ is not None:
        gold = gold.filter(round=round_)
    total(gold.count())
    round_map = {r.pk: r for r in Round.objects.all()}
    set_names = ItemSet.objects.values_list("pk", "tier", "name")
    tiers = TierLists({pk: (tier, name) for pk, tier, name in set_names})
    tally = Tally()
    encodings = Encodings()  # this export's own: nothing outlives it
    size = max(1, settings.NSM_EXPORT_BATCH_SIZE)
    rule_set = active_rule_set()
    emoexpl.remove_partials(folder, tag)
    with emoexpl.atomic_archive(folder, tag=tag) as pending:
        with pending.writer.stream(emoexpl.JSONL_NAME) as out:
            verified_by = (verifier.cache_model, verifier.threshold) if verifier else None
            for batch in gold_batches(round_.pk if round_ else None, size, verified_by):
                if stopped():
                    return None
                records = batch_records(
                    batch, rounds=round_map, tiers=tiers, verifier=verifier, tally=tally, encodings=encodings
                )
                out.write_many(records)
                progress(len(batch))
        jsonl = pending.writer.files[emoexpl.JSONL_NAME]
        # the contrast split: the frozen minimal pairs written from the exported items (contrasts)
        contrast, contrast_sets, contrast_pairs = export_split(set(gold.values_list("item_id", flat=True)))
        if contrast_pairs:
            pending.writer.add(CONTRAST_NAME, contrast)
        changes = GoldChange.objects.filter(gold__in=gold, pk__lte=read_at.gold_change)
        as_of = changes.aggregate(last=Max("at"))["last"]
        manifest = {
            "name": "EmoExpl",
            "format": emoexpl.FORMAT,
            "scope": f"round {round_.name}" if round_ else "whole gold corpus",
            "software_version": nsmcore.__version__,
            # the wording of every rendered line in this file (verifier judgements are of that text)
            "renderer_version": nsmcore.RENDERER_VERSION,
            "gold_as_of": as_of.isoformat() if as_of else None,
            "counts": tally.manifest_counts(verified=verifier is not None),
            "agreement": _agreement(rounds),
            "conventions": _conventions(rounds),
            "rule_set": {
                "version": rule_set.version,
                "hash": rule_set.content_hash,
                "rules": len(rule_set.rules),
            },
            "verifier": (
                {"model": verifier.model_id, "revision": verifier.revision, "threshold": verifier.threshold}
                if verifier
                else None
            ),
            "files": {
                emoexpl.JSONL_NAME: {**jsonl, "records": tally.items},
                **(
                    {CONTRAST_NAME: {**pending.writer.files[CONTRAST_NAME], "records": contrast_pairs}}
                    if contrast_pairs
                    else {}
                ),
            },
            "contrast": {"sets": contrast_sets, "pairs": contrast_pairs},
            "citation": settings.NSM_EXPORT_CITATION,
            # how it was made (exports.recipe); exports.replay rebuilds this manifest key by key
            "recipe": recipe_for_export(
                read_at=read_at,
                round_=round_,
                rounds=rounds,
                rule_set=rule_set,
                tier_sets={name for _, name in tally.tiers},
            ),
        }
        pending.writer.add(emoexpl.MANIFEST_NAME, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        pending.writer.add(emoexpl.CARD_NAME, emoexpl.dataset_card(manifest))
        pending.writer.add(SCHEMA_NAME, json.dumps(emoexpl.record_schema(), indent=2) + "\n")
        scope = _slug(round_.name) if round_ else "all"
        pending.name = f"emoexpl-{scope}-{jsonl['sha256'][:12]}.zip"
    return pending.path, manifest


def run_export(job: Job, params: ExportParams) -> bool:
    """The worker's side of an export job: the model (an unusable one fails the job before
    anything is written), the export's writes (export_prepare), then the archive."""
    verifier = verifier_build(params.model, exporting=True) if params.verify else None
    export_prepare(job.round)
    if verifier is not None:
        Job.objects.filter(pk=job.pk).update(engine=verifier.model_id, engine_version=verifier.revision)
    Job.objects.filter(pk=job.pk).update(done=0)

    def progress(n: int) -> None:
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(done=F("done") + n)

    written = export_write(
        round_=job.round, verifier=verifier, folder=Path(settings.NSM_EXPORT_DIR), tag=f"job{job.pk}",
        progress=progress, stopped=lambda: job_stopped(job.pk),
        total=lambda n: Job.objects.filter(pk=job.pk).update(total=n),
    )  # fmt: skip
    if written is None:
        return False
    path, manifest = written
    for step in ARCHIVE_STEPS:  # before the history row: a step that fails leaves no row
        step(job, params, path)
    archive_sha = emoexpl.file_sha256(path)
    export = Export.objects.create(
        job=job, round=job.round, created_by=job.created_by, filename=path.name, bytes=path.stat().st_size,
        sha256=archive_sha, jsonl_sha256=manifest["files"][emoexpl.JSONL_NAME]["sha256"],
        records=manifest["counts"]["items"], lines=manifest["counts"]["lines"],
        verifier=f"{verifier.model_id}@{verifier.revision}" if verifier else "",
        rule_set_version=manifest["rule_set"]["version"], manifest=manifest,
    )  # fmt: skip
    ready = {"export": export.pk, "kind": export.kind, "job": job.pk, "round": export.round_id}
    event_send("export.ready", {**ready, "file": export.filename, "sha256": export.sha256})  # webhooks
    Job.objects.filter(pk=job.pk).update(
        summary={"export": export.pk, "file": path.name, "records": export.records, "bytes": export.bytes}
    )
    return True


def describe_export(job: Job, params: ExportParams) -> str:
    if not params.verify:
        return _("without verification")
    model = format_html(_("verified by <code>{}</code>"), job.engine or params.model)
    if job.engine_version:
        model = format_html(_("{} revision <code>{}</code>"), model, job.engine_version)
    return model


def export_result_path(job: Job) -> str | None:
    """The API download of the file an export job wrote; None until it is complete."""
    export = getattr(job, "export", None)  # the reverse one-to-one: none until the file is complete
    return reverse("api_export_download", args=[export.pk]) if export is not None else None


job_kind_register(
    JobKind(
        name=EXPORT,
        label=gettext_lazy("EmoExpl export"),
        params=ExportParams,
        run=run_export,
        describe=describe_export,
        whole=gettext_lazy("the whole gold corpus"),
        expected=(VerifierUnavailable,),
        status_template="exports/_status_export.html",
        form="exports.forms.ExportForm",
        form_template="exports/_export_form.html",
        related=("export",),
        result_path=export_result_path,
        results_page=("exports", gettext_lazy("Exports")),
    )
)
