"""Verify explications with an NLI model: `manage.py verify --round NAME` (the round's gold) or
`manage.py verify --item-set NAME --parser lexical` (a parser's explications).

The same job as the Jobs page starts: run here with a progress line, or queued for the worker
with --background. Judgements are cached, so running it again costs no forward pass."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from jobs.kinds import JobError
from jobs.models import Job
from jobs.progress import run_with_progress, scope_from_options
from verification.verify import job_verify_start


class Command(BaseCommand):
    help = "Check every rendered line against its text with an NLI model (cached by model, text and line)."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--round", help="verify the round's resolved gold")
        target.add_argument("--item-set", help="verify a parser's explications over an item set")
        parser.add_argument(
            "--parser", default="", help="with --item-set: the parser whose output is checked"
        )
        parser.add_argument(
            "--model", default="", help="NLI model name or local path (default: NSM_VERIFIER_MODEL)"
        )
        parser.add_argument(
            "--text-field", choices=["text", "masked_text"], default="", help="item sets only"
        )
        parser.add_argument("--background", action="store_true", help="queue for the worker and return")

    def handle(self, *args, **options):
        try:
            job = job_verify_start(
                user=None,
                **scope_from_options(options),
                parser=options["parser"],
                model=options["model"],
                text_field=options["text_field"],
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
        s = job.summary
        self.stdout.write(
            f"job #{job.pk} done: {s['lines']} lines of {s['items']} items, {s['entailed_lines']} entailed "
            f"at threshold {s['threshold']} ({job.engine} {job.engine_version})"
        )
