from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from annotator.imports import FORMATS, detect_format, items_import
from annotator.management.commands._files import run_import


class Command(BaseCommand):
    help = "Import items from a crowd-enVent TSV, JSONL or CSV file. A bad file is refused whole."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=FORMATS, help="default: from the file name")
        parser.add_argument("--source", default="crowd-enVent", help="corpus name the ids belong to")

    def handle(self, *args: Any, path: Path, format: str | None, source: str, **options: Any) -> None:
        report = run_import(
            path, lambda data: items_import(data=data, fmt=format or detect_format(path.name), source=source)
        )
        self.stdout.write(report.summary())
