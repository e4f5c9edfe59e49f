"""Export a round's raw annotations: `manage.py export_annotations --round NAME --format csv`.

The same raw-export job the Exports page and the API start (exports.raw_export): every revision of
every annotator's work, one JSONL object or CSV row each. Run here with a progress line, or queued
for the worker with --background. The file lands in NSM_EXPORT_DIR (and its history on the page);
--out copies it elsewhere too. Bad input (no such round, an unknown format) exits 2 naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Round
from exports.models import Export
from exports.raw_export import FORMATS, raw_export_start
from jobs.kinds import JobError
from jobs.models import Job
from jobs.progress import run_with_progress


class Command(BaseCommand):
    help = "Export every annotation revision of one round as JSONL or CSV (for your own analyses)."

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True, help="the round's name")
        parser.add_argument("--format", default="jsonl", help=f"{' or '.join(FORMATS)} (default jsonl)")
        parser.add_argument("--out", type=Path, help="also copy the file to this file or folder")
        parser.add_argument("--background", action="store_true", help="queue for the worker and return")

    def handle(self, *args, **options):
        round_ = Round.objects.filter(name=options["round"]).first()
        if round_ is None:
            raise CommandError(f"--round: no round named {options['round']!r}", returncode=2)
        if options["format"] not in FORMATS:
            raise CommandError(
                f"--format: unknown format {options['format']!r}; formats: {', '.join(FORMATS)}", returncode=2
            )
        out = options["out"]
        if out is not None and not out.is_dir() and not out.parent.is_dir():
            raise CommandError(f"--out: no folder {out.parent} to write {out.name} in", returncode=2)
        try:
            job = raw_export_start(
                user=None, round_=round_, format=options["format"], enqueue=options["background"]
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
        if out is not None:
            target = out / export.filename if out.is_dir() else out
            shutil.copyfile(export.path, target)
            where = target
        self.stdout.write(
            f"{export.records} revisions of round {round_.name} in {where} "
            f"({export.bytes} bytes, sha256 {export.sha256})"
        )
