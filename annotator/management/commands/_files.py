"""What the import commands share: reading the file and turning refusals into clear errors."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from annotator.imports import ImportFileError


def run_import(path: Path, importer: Callable[[bytes], Any]) -> Any:
    """Read ``path`` and pass its bytes to ``importer``; a refused file becomes a CommandError
    listing every problem (nothing was written)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror}") from None
    try:
        return importer(data)
    except ImportFileError as error:
        raise CommandError(
            f"{path}: nothing imported:\n  " + "\n  ".join(str(p) for p in error.problems)
        ) from None
