from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from annotator.management.commands._files import run_import
from annotator.model_output import predictions_import


class Command(BaseCommand):
    help = "Import parser predictions from JSONL (text_id and the twelve slots, or explication/raw_output)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--parser", required=True, help="parser name, as rounds refer to it")
        parser.add_argument("--parser-version", default="")
        parser.add_argument("--source", default="crowd-enVent")

    def handle(self, *args: Any, path: Path, parser: str, parser_version: str, source: str, **o: Any) -> None:
        report = run_import(
            path,
            lambda data: predictions_import(
                data=data, parser=parser, parser_version=parser_version, source=source
            ),
        )
        self.stdout.write(report.summary())
