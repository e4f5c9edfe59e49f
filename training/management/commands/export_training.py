"""Write parser training data: `manage.py export_training --round NAME --format prompt --out FILE`.

The resolved gold of a round (or of an item set), and any annotator passes chosen, as text ->
explication pairs in the transformers backend's prompt format or the chat format, with a
manifest beside the file (``FILE.manifest.json``). Held-out (eval tier) items are refused, named:
exit 2, nothing written (docs/training.md)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from jobs.progress import scope_from_options
from nsmcore.training_data import FORMATS, TrainingDataError, manifest_path, write_training
from training.train import source_for


class Command(BaseCommand):
    help = "Write a round's (or an item set's) gold as parser training data, with its manifest."

    def add_arguments(self, parser):
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--round", help="round name")
        target.add_argument("--item-set", help="item set name (its resolved gold, from any round)")
        parser.add_argument(
            "--passes", default="gold", help="comma-separated: gold, annotator:<username> (rounds only)"
        )
        parser.add_argument("--format", choices=FORMATS, default="prompt", dest="fmt")
        parser.add_argument(
            "--free", action="store_true", help="chat format: the free-decoding user message (no schema)"
        )
        parser.add_argument("--out", required=True, help="the JSONL file to write")

    def handle(self, *args, **options):
        try:
            source = source_for(**scope_from_options(options), passes=options["passes"])
            manifest = write_training(
                source.records,
                options["out"],
                options["fmt"],
                meta=source.meta,
                with_schema=not options["free"],
            )
        except TrainingDataError as error:  # bad input: exit 2, with the reason
            raise CommandError(str(error), returncode=2) from None
        except OSError as error:
            raise CommandError(f"cannot write {options['out']}: {error}", returncode=2) from None
        self.stdout.write(
            f"{manifest['lines']} lines ({manifest['records']} explications of {manifest['items']} items, "
            f"{options['fmt']} format) in {options['out']}; manifest {manifest_path(options['out'])}; "
            f"data sha256 {manifest['data_sha256']}"
        )
