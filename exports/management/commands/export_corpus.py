"""Export the gold corpus as an EmoExpl archive: `manage.py export_corpus [--round NAME]`.

The same export job the Exports page starts: run here with a progress line, or queued for the
worker with --background. The archive lands in NSM_EXPORT_DIR (and its history on the page);
--out copies it elsewhere too."""

from __future__ import annotations

import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Round
from exports.export import export_start
from exports.hf_command import hf_arguments, hf_carry_out, hf_plan
from exports.models import Export
from jobs.kinds import JobError
from jobs.models import Job
from jobs.progress import run_with_progress


class Command(BaseCommand):
    help = "Export the resolved gold (all of it, or one round's) as JSONL with a manifest, in one zip."

    def add_arguments(self, parser):
        parser.add_argument("--round", help="one round's gold (default: the whole gold corpus)")
        parser.add_argument(
            "--model", default="", help="NLI model name or local path (default: NSM_VERIFIER_MODEL)"
        )
        parser.add_argument(
            "--no-verify", action="store_true", help="export the lines without entailment judgements"
        )
        parser.add_argument("--out", type=Path, help="also copy the archive to this file or folder")
        parser.add_argument("--background", action="store_true", help="queue for the worker and return")
        hf_arguments(parser)  # --hf-folder, --format, --license, --push-to-hub, --private (exports.hf)

    def handle(self, *args, **options):
        plan = hf_plan(options)  # bad Hugging Face options exit 2 before the export runs
        round_ = None
        if options["round"]:
            round_ = Round.objects.filter(name=options["round"]).first()
            if round_ is None:
                raise CommandError(f"no round named {options['round']!r}", returncode=2)
        try:
            job = export_start(
                user=None,
                round_=round_,
                model=options["model"],
                verify=not options["no_verify"],
                enqueue=options["background"],
            )
        except JobError as error:  # bad input: exit 2, with the reason
            raise CommandError(str(error), returncode=2) from None
        if options["background"]:
            self.stdout.write(f"job #{job.pk} queued; watch it at /jobs/{job.pk}/")
            return
        job = run_with_progress(self, job)
        if job.status != Job.Status.DONE:
            raise CommandError(f"job #{job.pk} {job.status}: {job.error or 'stopped'}")
        export = Export.objects.get(job=job)
        where = export.path
        if options["out"]:
            target = options["out"] / export.filename if options["out"].is_dir() else options["out"]
            shutil.copyfile(export.path, target)
            where = target
        self.stdout.write(
            f"{export.records} records, {export.lines} lines in {where} "
            f"({export.bytes} bytes, sha256 {export.sha256})"
        )
        hf_carry_out(self, export, plan)
