"""Train jobs: train a parser on a round's (or an item set's) gold, and chosen annotator passes,
in the background, with progress in steps, cancel and resume.

The data is read by adjudication.training (held-out items refused, named) and frozen on the
job's first run in its output folder with its manifest, in the form the method reads back, so a
resumed job trains on exactly what it started with. The method is a registry (``METHODS``):

- "lora" (nsmcore.lora): the decoder's prompts (``data/train.prompt.jsonl``), the loss curve,
  checkpoints; the result is an adapter folder the prefill job takes as ``adapter`` over its base
  model.
- "classifier" (nsmcore.parsers.classifier): the (text, slots) pairs (``data/train.pairs.jsonl``),
  one step of a few seconds on a CPU; the result is a model folder the prefill job takes as
  ``model`` with backend ``classifier``. It needs no base model and ignores the LoRA settings.

See docs/training.md."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from adjudication.gold.services import gold_sync
from adjudication.training import TrainingSource, labelled_texts, training_data
from annotator.models import ItemSet, Round
from jobs.kinds import JobError, JobKind, job_kind_register
from jobs.models import Job
from jobs.services import job_create, job_stopped
from nsmcore import charts
from nsmcore.encoder import encoder_problem
from nsmcore.lora import LoraError, last_checkpoint, train_lora
from nsmcore.parsers.base import ParserUnavailable
from nsmcore.parsers.classifier import (
    CARD_FILE,
    DEFAULT_OPTIONS,
    ClassifierError,
    ClassifierParser,
)
from nsmcore.parsers.classifier_training import MIN_CALIBRATION, train_classifier
from nsmcore.schema import SLOTS
from nsmcore.training_data import (
    TrainingDataError,
    TrainingRecord,
    data_hash,
    jsonl_bytes,
    manifest_path,
    pair_rows,
    prompt_rows,
    read_prompt_rows,
    training_manifest,
    write_atomic,
    write_training,
)
from predictions.parsers import ModelFolderError, inside_model_dir
from rules.rulesets import active_rule_set
from training.params import TrainParams
from training.registry import register_trained

TRAIN = "train"
DATA_FILE = Path("data") / "train.prompt.jsonl"
PAIRS_FILE = Path("data") / "train.pairs.jsonl"
#: the settings only the lora method reads (the classifier ignores them; the form and the command
#: leave them at their defaults for it)
#: the loss curve keeps at most this many points (means of consecutive steps beyond it)
CURVE_POINTS = 200


def output_folder(job: Job, params: TrainParams) -> Path:
    return (
        inside_model_dir(params.output_dir)
        if params.output_dir
        else Path(settings.NSM_MODEL_DIR) / f"job-{job.pk}"
    )


def source_for(*, round_: Round | None, item_set: ItemSet | None, passes: str) -> TrainingSource:
    """The training data, after opening the gold records whose annotations are all in (this is a
    writer: a job or a command, never a page's GET)."""
    for r in [round_] if round_ is not None else Round.objects.filter(item_set=item_set):
        gold_sync(r)
    return training_data(round_=round_, item_set=item_set, passes=passes)


def curve(losses: list[tuple[int, float]] | list[list[float]]) -> list[list[float]]:
    """At most CURVE_POINTS (step, loss) points: the mean of consecutive steps beyond that."""
    if len(losses) <= CURVE_POINTS:
        return [[int(s), float(x)] for s, x in losses]
    size = math.ceil(len(losses) / CURVE_POINTS)
    out = []
    for start in range(0, len(losses), size):
        chunk = losses[start : start + size]
        out.append([int(chunk[-1][0]), round(sum(float(x) for _, x in chunk) / len(chunk), 6)])
    return out


# The methods: each trains on the job's data into its output folder and returns False when it
# stopped on a cancel.
Runner = Callable[[Job, TrainParams, list[dict[str, Any]], dict[str, Any], Path], bool]


def run_lora(
    job: Job, params: TrainParams, rows: list[dict[str, Any]], manifest: dict[str, Any], out: Path
) -> bool:
    Job.objects.filter(pk=job.pk).update(engine=params.base_model[:300])
    last = [0.0]
    base_summary = {"method": "lora", "adapter": str(out), "data": _data_summary(manifest)}

    def progress(step: int, total: int, losses: list[tuple[int, float]]) -> None:
        now = time.monotonic()
        if step < total and now - last[0] < 1.0:
            return
        last[0] = now
        summary = {**base_summary, "step": step, "loss": losses[-1][1], "curve": curve(losses)}
        Job.objects.filter(pk=job.pk).update(done=step, total=total, summary=summary)

    result = train_lora(
        params.base_model, rows, params.lora_settings(), out, progress=progress,
        should_stop=lambda: job_stopped(job.pk), resume=True, data=manifest,
    )  # fmt: skip
    summary = {
        **base_summary, "step": result.step, "loss": result.losses[-1][1] if result.losses else None,
        "curve": curve(result.losses),
    }  # fmt: skip
    if result.card is not None:
        card = result.card
        registered = register_trained(job, params, out, card, backend="transformers")
        summary |= {"card": str(out / "card.json"), "first_loss": card["first_loss"],
                    "seconds": card["seconds"],
                    "device": card["device"], "target_modules": card["target_modules"],
                    "registered": registered.spec, "registered_name": registered.name,
                    "registered_version": registered.version}  # fmt: skip
        Job.objects.filter(pk=job.pk).update(
            done=result.step, total=result.total_steps, summary=summary,
            engine_version=f"{card['base_revision']}+a{card['adapter_digest']}",
        )  # fmt: skip
    else:
        Job.objects.filter(pk=job.pk).update(done=result.step, total=result.total_steps, summary=summary)
    return not result.stopped


def run_classifier(
    job: Job, params: TrainParams, rows: list[dict[str, Any]], manifest: dict[str, Any], out: Path
) -> bool:
    """Fit (on the gold pairs and, with ``labels_from``, through the rules on that item set's
    labelled texts, one step per EM round), save with the data's manifest in the card, read the
    folder back as a prefill job will, and record the parser's name and version as the engine."""
    labelled, left_out = labelled_for(job, params, rows)
    steps = 1 + (DEFAULT_OPTIONS["iterations"] if labelled else 0)
    Job.objects.filter(pk=job.pk).update(engine=f"classifier:{out}"[:300], done=0, total=steps)
    if job_stopped(job.pk):
        return False
    started = time.monotonic()

    def progress(step: int, total: int, what: str) -> None:
        Job.objects.filter(pk=job.pk).update(done=step, total=total)

    options: dict[str, Any] = {"encoder": params.encoder, "appraisal_weight": params.appraisal_weight}
    abstention = ""
    if labelled:
        options |= {"label_trust": params.label_trust, "label_prior": params.label_prior}
        if params.abstain_below == "auto" and len(labelled) < 2 * MIN_CALIBRATION:
            abstention = (
                f"no abstention: {len(labelled)} labelled texts, and 'auto' needs {2 * MIN_CALIBRATION}"
            )
        elif params.abstain_below:
            options["abstain_below"] = (
                "auto" if params.abstain_below == "auto" else float(params.abstain_below)
            )
    try:
        model = train_classifier(
            [(row["text"], row["slots"]) for row in rows],
            seed=params.seed, labelled=labelled, rule_set=active_rule_set(), progress=progress, **options,
        )  # fmt: skip
    except ClassifierError as error:
        raise JobError(str(error)) from None
    meta = {"job": job.pk, "method": "classifier", "data": manifest}
    if params.labels_from:
        meta["labels"] = {"item_set": params.labels_from, "texts": len(labelled), "left_out": left_out}
    model.save(out, meta=meta)
    seconds = round(time.monotonic() - started, 3)
    try:
        ClassifierParser(str(out))  # read back as a prefill job will
    except ParserUnavailable as error:
        raise JobError(str(error)) from None
    registered = register_trained(job, params, out, model.card)
    parser = ClassifierParser(str(out), label=registered.spec)
    summary = {
        "method": "classifier", "model": str(out), "registered": registered.spec,
        "registered_name": registered.name, "registered_version": registered.version,
        "card": str(out / CARD_FILE), "step": steps,
        "data": _data_summary(manifest), "data_hash": model.data_hash, "examples": model.examples,
        "features": model.card["sizes"]["features"], "value_counts": model.value_counts, "seconds": seconds,
        "labelled": meta.get("labels"),
        "validation": model.sources.get("calibration") and {
            k: v for k, v in model.sources["calibration"].items() if k != "ids"
        },
        "abstention": abstention or (
            f"below a confidence of {model.options['abstain_below']}"
            if model.options.get("abstain_below") is not None else "none"
        ),
    }  # fmt: skip
    Job.objects.filter(pk=job.pk).update(
        done=steps,
        total=steps,
        summary=summary,
        engine=parser.name[:300],
        engine_version=parser.version[:100],
    )
    return True


def labelled_for(
    job: Job, params: TrainParams, rows: list[dict[str, Any]]
) -> tuple[list[Any], dict[str, int]]:
    """The labelled texts of ``labels_from`` (none without it), read in the round's text field
    (an item set's job: the masked text, what annotators usually see), the gold items left out."""
    if not params.labels_from:
        return [], {}
    item_set = ItemSet.objects.filter(name=params.labels_from).first()
    if item_set is None:
        raise JobError(f"train job parameter 'labels_from': no item set named {params.labels_from!r}")
    text_field = job.round.text_field if job.round_id else Round.TEXT_MASKED
    source = labelled_texts(item_set, text_field=text_field, exclude={str(r.get("id", "")) for r in rows})
    return source.rows, source.left_out


def write_pairs(records: list[TrainingRecord], path: Path, *, meta: dict[str, Any]) -> dict[str, Any]:
    """The pairs as JSONL with a manifest beside it (as nsmcore.training_data writes the other
    formats: each file atomically, the manifest last). Returns the manifest."""
    rows = pair_rows(records)
    data = jsonl_bytes(rows)
    manifest = training_manifest(records, fmt="pairs", lines=len(rows), meta=meta)
    manifest["file_sha256"] = hashlib.sha256(data).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)
    write_atomic(manifest_path(path), json.dumps(manifest, indent=2, ensure_ascii=False).encode() + b"\n")
    return manifest


def read_pairs(path: Path, manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The frozen pairs, checked against their manifest's data hash; TrainingDataError naming the
    line that is not a pair, or the file when it changed since the job froze it."""
    rows, records = [], []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise TrainingDataError(f"{path} line {number}: not JSON ({error})") from None
            if not (
                isinstance(row, dict)
                and isinstance(row.get("text"), str)
                and isinstance(row.get("slots"), dict)
            ):
                raise TrainingDataError(f"{path} line {number}: a pairs line has a text and its slots")
            rows.append(row)
            records.append(
                TrainingRecord(
                    id=str(row.get("id", "")),
                    text=row["text"],
                    slots=row["slots"],
                    source=str(row.get("source", "gold")),
                    construal=int(row.get("construal", 1)),
                )
            )
    if data_hash(records) != manifest.get("data_sha256"):
        raise TrainingDataError(
            f"{path} does not match the data hash in its manifest (changed since the job froze it); "
            "start a new job"
        )
    return rows


@dataclass(frozen=True)
class Method:
    """A training method: how it freezes the job's records, reads them back on a resume, and trains."""

    run: Runner
    data_file: Path
    freeze: Callable[[list[TrainingRecord], Path, dict[str, Any]], dict[str, Any]]
    rows: Callable[[list[TrainingRecord]], list[dict[str, Any]]]
    read: Callable[[Path, dict[str, Any]], list[dict[str, Any]]]


METHODS: dict[str, Method] = {
    "lora": Method(
        run=run_lora,
        data_file=DATA_FILE,
        freeze=lambda records, path, meta: write_training(records, path, "prompt", meta=meta),
        rows=prompt_rows,
        read=lambda path, manifest: read_prompt_rows(path),
    ),
    "classifier": Method(
        run=run_classifier,
        data_file=PAIRS_FILE,
        freeze=lambda records, path, meta: write_pairs(records, path, meta=meta),
        rows=pair_rows,
        read=read_pairs,
    ),
}


def _data_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    keys = ("items", "records", "lines", "sources", "data_sha256", "rule_set_version", "scope")
    return {k: manifest.get(k) for k in keys}


def folder_owner(out: Path) -> int | None:
    """The job whose training data a folder holds (None: none)."""
    for data_file in {m.data_file for m in METHODS.values()}:
        frozen = manifest_path(out / data_file)
        if frozen.is_file():
            try:
                return json.loads(frozen.read_text()).get("job")
            except ValueError:
                return None
    return None


def run_train(job: Job, params: TrainParams) -> bool:
    """Freeze the data in the output folder on the first run (a resume reads it back), then train
    with the job's method; False when cancelled."""
    out = output_folder(job, params)
    method = METHODS[params.method]
    owner = folder_owner(out)
    if owner is not None and owner != job.pk:
        raise JobError(
            f"the output folder {out} holds the training data of job #{owner}; choose another output folder"
        )
    data_file = out / method.data_file
    if data_file.is_file() and manifest_path(data_file).is_file():
        manifest = json.loads(manifest_path(data_file).read_text())
        rows = method.read(data_file, manifest)
    else:
        scope = (
            {"round_": job.round, "item_set": None}
            if job.round_id
            else {"round_": None, "item_set": job.item_set}
        )
        source = source_for(**scope, passes=params.passes)
        manifest = method.freeze(source.records, data_file, {**source.meta, "job": job.pk})
        rows = method.rows(source.records)
    return method.run(job, params, rows, manifest, out)


def job_train_start(
    *, user, item_set: ItemSet | None = None, round_: Round | None = None, enqueue: bool = True, **values: Any
) -> Job:
    """Check the parameters and the data (held-out items refused, named) and create the job.
    ``values`` are TrainParams fields; for lora ``base_model`` defaults to NSM_PARSER_MODEL, and
    the classifier has none (a base model given is dropped: it is not used)."""
    if (item_set is None) == (round_ is None):
        raise JobError(_("choose an item set or a round, not both"))
    values = {k: v for k, v in values.items() if v is not None}
    if values.get("method", "lora") == "lora":
        values.setdefault("base_model", settings.NSM_PARSER_MODEL)
    else:
        values.pop("base_model", None)
        if not values.get("encoder"):
            values["encoder"] = settings.NSM_ENCODER_MODEL
    params = TrainParams.from_json(values)
    if params.output_dir:
        try:
            out = inside_model_dir(params.output_dir)
        except ModelFolderError as error:
            raise JobError(_("train job parameter 'output_dir': %(error)s") % {"error": error}) from None
        if out == Path(settings.NSM_MODEL_DIR).expanduser().resolve():
            raise JobError(
                _(
                    "train job parameter 'output_dir': %(value)s is NSM_MODEL_DIR itself; give a folder "
                    "inside NSM_MODEL_DIR, not that folder"
                )
                % {"value": params.output_dir}
            )
        if out.exists() and not out.is_dir():
            raise JobError(
                _("train job parameter 'output_dir': %(out)s is a file, not a folder") % {"out": out}
            )
    base = params.base_model
    if base.startswith(("/", "./", "../", "~")) and not Path(base).expanduser().is_dir():
        raise JobError(_("train job parameter 'base_model': no model folder at %(base)s") % {"base": base})
    if params.encoder and (problem := encoder_problem(params.encoder)):
        raise JobError(_("train job parameter 'encoder': %(problem)s") % {"problem": problem})
    if params.output_dir:
        owner = folder_owner(out)
        if owner is not None:
            raise JobError(
                _(
                    "train job parameter 'output_dir': %(folder)s holds the training data of job "
                    "#%(owner)s; choose another output folder"
                )
                % {"folder": params.output_dir, "owner": owner}
            )
    if params.labels_from and not ItemSet.objects.filter(name=params.labels_from).exists():
        raise JobError(
            _("train job parameter 'labels_from': no item set named %(name)s")
            % {"name": repr(params.labels_from)}
        )
    try:
        source = source_for(round_=round_, item_set=item_set, passes=params.passes)
    except TrainingDataError as error:
        raise JobError(str(error)) from None
    if params.method == "lora":
        examples = len(source.records) * len(SLOTS)
        total = params.epochs * math.ceil(examples / (params.batch_size * params.grad_accum))
    else:
        total = 1
    return job_create(
        TRAIN, user=user, item_set=item_set if round_ is None else round_.item_set, round_=round_,
        key=train_key(params), params=params,
        total=total, enqueue=enqueue,
    )  # fmt: skip


def train_key(params: TrainParams) -> str:
    """Two train jobs are the same job when every setting that makes a different model is the
    same (the classifier's labels, encoder, appraisal weight, name and seed included)."""
    parts = (params.method, params.base_model, params.passes, params.output_dir, params.parser_name,
             params.labels_from, params.encoder, params.appraisal_weight, params.label_trust,
             params.label_prior, params.abstain_below, params.seed)  # fmt: skip
    return "|".join(str(p) for p in parts)


def describe_train(job: Job, params: TrainParams) -> str:
    if params.method == "classifier":
        return format_html(
            _("classifier · passes {} · seed {} · model in <code>{}</code>"), params.passes, params.seed,
            output_folder(job, params),
        )  # fmt: skip
    settings_line = format_html(
        _("rank {}, alpha {}, {} epochs, learning rate {}, batch {}"), params.rank, params.alpha,
        params.epochs, params.learning_rate, params.batch_size * params.grad_accum,
    )  # fmt: skip
    return format_html(
        _("{} on <code>{}</code> · passes {} · {} · adapter in <code>{}</code>"),
        "LoRA" if params.method == "lora" else params.method, params.base_model, params.passes,
        settings_line, output_folder(job, params),
    )  # fmt: skip


def kept_train(job: Job) -> str:
    try:
        params = job.typed_params
    except JobError:
        return ""
    checkpoint = last_checkpoint(output_folder(job, params))
    if checkpoint is None:
        return ""
    return f"the checkpoint at step {int(checkpoint.name.split('-')[1])} is kept; resume to go on from it"


def train_status_context(job: Job) -> dict[str, Any]:
    points = [(float(s), float(x)) for s, x in (job.summary or {}).get("curve", [])]
    if not points:
        return {"loss_chart": None}
    # the axis spans the losses (a loss falls by a few percent; from zero the curve looks flat)
    lo, hi = min(y for _, y in points), max(y for _, y in points)
    return {"loss_chart": charts.line_chart(points, y_min=max(0.0, lo - 0.1 * (hi - lo or 1.0)))}


job_kind_register(
    JobKind(
        name=TRAIN,
        label=gettext_lazy("parser training"),
        params=TrainParams,
        run=run_train,
        describe=describe_train,
        expected=(LoraError, TrainingDataError, ClassifierError),
        kept=kept_train,
        status_template="training/_status_train.html",
        unit=gettext_lazy("steps"),
        status_context=train_status_context,
        form="training.forms.TrainForm",
        form_template="training/_train_form.html",
    )
)
