from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotator.management.commands._files import run_import
from annotator.model_output import pass_import
from annotator.models import Round


class Command(BaseCommand):
    help = "Import a whole pass of annotations (JSONL) as one external or model annotator's work in a round."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--round", required=True, dest="round_name")
        parser.add_argument("--annotator", required=True, help="name of the (non-login) annotator account")
        parser.add_argument("--source", default="crowd-enVent")

    def handle(self, *args: Any, path: Path, round_name: str, annotator: str, source: str, **o: Any) -> None:
        round_ = Round.objects.filter(name=round_name).first()
        if round_ is None:
            raise CommandError(f"no round named {round_name!r}")
        report = run_import(
            path, lambda data: pass_import(data=data, round_=round_, annotator_name=annotator, source=source)
        )
        self.stdout.write(report.summary())
