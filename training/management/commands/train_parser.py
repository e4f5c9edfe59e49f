"""Train the parser: `manage.py train_parser --round NAME --base MODEL --out FOLDER` (LoRA), or
`manage.py train_parser --round NAME --method classifier --out FOLDER` (no base model).

The same job as the Train form on the Jobs page (training.train), run here with its progress
(steps and loss) on the terminal, or queued for the worker with --background. Cancelled or
failed, it resumes from its last checkpoint with --resume JOB_ID. Held-out (eval tier) items, a
missing base model folder or a bad setting: exit 2 with the reason (docs/training.md)."""

from __future__ import annotations

import dataclasses

from django.core.management.base import BaseCommand, CommandError

from jobs.kinds import JobError
from jobs.models import Job
from jobs.progress import run_with_progress, scope_from_options
from jobs.services import job_requeue, job_resume
from training.defaults import default_train_method
from training.params import LORA_FIELDS, TrainParams
from training.train import METHODS, TRAIN, job_train_start

FIELDS = TrainParams.__dataclass_fields__
#: the parameters declared with their bounds (jobs.kinds.setting): one option each, as declared
SETTINGS = [field for field in dataclasses.fields(TrainParams) if "min" in field.metadata]


def _help(field: dataclasses.Field) -> str:
    low, high = field.metadata["min"], field.metadata["max"]
    bounds = f"{low} to {high}" if high is not None else f"at least {low}" if low is not None else ""
    parts = [field.metadata["help"], bounds, f"default {field.default}"]
    return "; ".join(part for part in parts if part)


class Command(BaseCommand):
    help = (
        "Train a parser on a round's or an item set's gold: a LoRA adapter for the transformers parser "
        "(--method lora, --base) or the classifier parser (--method classifier)."
    )

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group()
        target.add_argument("--round", help="round name")
        target.add_argument("--item-set", help="item set name (its resolved gold, from any round)")
        target.add_argument("--resume", type=int, metavar="JOB_ID", help="go on with a stopped train job")
        parser.add_argument("--passes", default="gold", help="comma-separated: gold, annotator:<username>")
        parser.add_argument(
            "--method", choices=list(METHODS), default="",
            help="default: lora with --base or a GPU, the classifier elsewhere (NSM_TRAIN_METHOD)",
        )  # fmt: skip
        parser.add_argument(
            "--base", default="", help="lora: base model, hub name or local folder (NSM_PARSER_MODEL)"
        )
        parser.add_argument(
            "--out", default="", help="adapter or model folder (default: NSM_MODEL_DIR/job-<id>)"
        )
        parser.add_argument("--target-modules", default="", help="comma-separated; empty: the architecture's")
        for field in SETTINGS:  # their types, defaults, bounds and help: TrainParams' declaration
            flags = ["--" + field.name.replace("_", "-")] + (
                ["--lr"] if field.name == "learning_rate" else []
            )
            help_text = _help(field)
            if isinstance(field.default, bool):
                parser.add_argument(*flags, action="store_true", help=help_text)
            else:
                parser.add_argument(*flags, type=type(field.default), default=field.default, help=help_text)
        parser.add_argument(
            "--name", default="", help="registry name of the trained parser (default METHOD-SCOPE)"
        )
        parser.add_argument(
            "--labels-from",
            default="",
            metavar="ITEM_SET",
            help="classifier: train through the rules on this item set's reference labels too",
        )
        parser.add_argument(
            "--encoder", default="", help="classifier: sentence embeddings ('bundled' or a folder)"
        )
        parser.add_argument(
            "--abstain-below", default=FIELDS["abstain_below"].default, metavar="auto|SHARE|''",
            help="classifier, with labels: abstain below this confidence ('auto': chosen on held-back "
            "labels)",
        )  # fmt: skip
        parser.add_argument("--background", action="store_true", help="queue for the worker and return")

    def handle(self, *args, **options):
        options["method"] = options["method"] or default_train_method(options["base"])
        try:
            if options["resume"]:
                job = Job.objects.filter(pk=options["resume"], kind=TRAIN).first()
                if job is None:
                    raise JobError(f"no train job #{options['resume']}")
                job = job_resume(job=job) if options["background"] else job_requeue(job=job)
            else:
                if not (options["round"] or options["item_set"]):
                    raise JobError("choose --round, --item-set or --resume JOB_ID")
                values = {
                    name: options[name] for name in FIELDS if name in options and name not in ("method",)
                }
                values |= {
                    "method": options["method"],
                    "passes": options["passes"],
                    "output_dir": options["out"],
                }
                values |= {
                    "labels_from": options["labels_from"],
                    "parser_name": options["name"],
                    "encoder": options["encoder"],
                    "appraisal_weight": options["appraisal_weight"],
                    "label_trust": options["label_trust"],
                    "label_prior": options["label_prior"],
                    "abstain_below": options["abstain_below"],
                }
                if options["method"] != "lora":  # the LoRA settings do not apply
                    values = {k: v for k, v in values.items() if k not in LORA_FIELDS}
                elif options["base"]:
                    values["base_model"] = options["base"]
                job = job_train_start(
                    user=None, **scope_from_options(options), enqueue=options["background"], **values
                )
        except JobError as error:  # bad input: exit 2, with the reason
            raise CommandError(str(error), returncode=2) from None
        if options["background"]:
            self.stdout.write(f"job #{job.pk} queued: {job.total} steps; watch it at /jobs/{job.pk}/")
            return
        job = run_with_progress(self, job)
        summary = job.summary or {}
        line = f"job #{job.pk} {job.status}: {job.done}/{job.total} steps"
        if summary.get("loss") is not None:
            line += f", loss {summary.get('first_loss', summary['loss'])} -> {summary['loss']}"
        if job.typed_params.method == "classifier":
            if summary.get("registered"):
                line += (
                    f"; registered as {summary['registered']}, model in {summary.get('model', '-')} "
                    f"(prefill with --backend classifier --model {summary['registered']})"
                )
        elif summary.get("adapter"):
            line += f"; adapter in {summary['adapter']}"
            if summary.get("registered"):
                line += (
                    f", registered as {summary['registered']} "
                    f"(prefill with --backend transformers --model {summary['registered']})"
                )
        if job.status != Job.Status.DONE:
            raise CommandError(f"{line}: {job.error}" if job.error else line)
        self.stdout.write(line)
