"""Prefill an item set or a round with a parser: `manage.py prefill --item-set NAME`.

Runs here with a progress line, or with --background hands the job to the worker (whose progress
the Jobs page shows). Either way it is the same job as one started from the page."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from jobs.kinds import JobError
from jobs.models import Job
from jobs.progress import run_with_progress, scope_from_options
from nsmcore.parsers import BACKENDS
from predictions.prefill import job_prefill_start


class Command(BaseCommand):
    help = "Parse every item of an item set or a round that has no prediction from this parser yet."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--item-set", help="item set name")
        target.add_argument("--round", help="round name")
        parser.add_argument(
            "--backend", choices=BACKENDS, default="",
            help="default: the best registered parser (manage.py parsers), else NSM_PARSER_BACKEND",
        )  # fmt: skip
        parser.add_argument(
            "--model",
            default="",
            help="a registered parser (NAME or NAME@VERSION), a model name or a local path (default: the "
            "settings, or the best registered parser for the classifier)",
        )
        parser.add_argument("--mode", choices=["schema", "free"], default="", help="openai backend only")
        parser.add_argument(
            "--adapter", default="", help="transformers only: a LoRA adapter folder over the model"
        )
        parser.add_argument(
            "--text-field",
            choices=["text", "masked_text"],
            default="",
            help="item sets only (default masked_text: the text without its emotion words)",
        )
        parser.add_argument(
            "--overwrite", action="store_true", help="parse again items that have a prediction"
        )
        parser.add_argument("--background", action="store_true", help="queue for the worker and return")

    def handle(self, *args, **options):
        try:
            job = job_prefill_start(
                user=None,
                **scope_from_options(options),
                backend=options["backend"],
                model=options["model"],
                mode=options["mode"],
                text_field=options["text_field"],
                overwrite=options["overwrite"],
                adapter=options["adapter"],
                enqueue=options["background"],
            )
        except JobError as error:  # bad input: exit 2, with the reason
            raise CommandError(str(error), returncode=2) from None
        if options["background"]:
            self.stdout.write(f"job #{job.pk} queued: {job.total} items; watch it at /jobs/{job.pk}/")
            return
        self._run_with_progress(job)

    def _run_with_progress(self, job: Job) -> None:
        job = run_with_progress(self, job)
        summary = (
            f"job #{job.pk} {job.status}: {job.done}/{job.total} items, {job.legal} legal, "
            f"{job.illegal} illegal, {job.skipped} skipped ({job.engine} {job.engine_version})"
        )
        if job.status != Job.Status.DONE:
            raise CommandError(f"{summary}: {job.error}" if job.error else summary)
        self.stdout.write(summary)
