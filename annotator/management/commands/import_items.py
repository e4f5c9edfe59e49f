from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand

from annotator.imports import FORMATS, default_source, detect_format, items_import
from annotator.management.commands._files import run_import


class Command(BaseCommand):
    help = "Import items from a crowd-enVent TSV, JSONL or CSV file. A bad file is refused whole."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--format", choices=FORMATS, help="default: from the file name")
        parser.add_argument(
            "--source",
            help="corpus name the ids belong to (default, as in the browser: crowd-enVent for TSV, "
            "the file's name for JSONL and CSV)",
        )

    def handle(self, *args: Any, path: Path, format: str | None, source: str | None, **options: Any) -> None:
        def write(data: bytes):
            fmt = format or detect_format(path.name)
            name = source or default_source(fmt=fmt, filename=path.name)
            return items_import(data=data, fmt=fmt, source=name)

        report = run_import(path, write)
        self.stdout.write(report.summary())
