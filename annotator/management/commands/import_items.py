from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotator.imports import FORMATS, ImportFileError, detect_format, items_import


class Command(BaseCommand):
    help = "Import items from a crowd-enVent TSV, JSONL or CSV file. A bad file is refused whole."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=FORMATS, help="default: from the file name")
        parser.add_argument("--source", default="crowd-enVent", help="corpus name the ids belong to")

    def handle(self, *args: Any, path: Path, format: str | None, source: str, **options: Any) -> None:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"{path}: cannot read: {error.strerror}") from None
        try:
            report = items_import(data=data, fmt=format or detect_format(path.name), source=source)
        except ImportFileError as error:
            raise CommandError(
                f"{path}: nothing imported:\\n  " + "\\n  ".join(str(p) for p in error.problems)
            ) from None
        self.stdout.write(report.summary())
