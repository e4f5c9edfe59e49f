"""The command line's input: JSONL lines read as objects, and the one error that means the input
itself is unusable (exit 2, naming the line). Shared by nsmcore.cli and its subcommands."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import IO, Any

from nsmcore import jsonio


class InputError(Exception):
    """The input cannot be read; reported on stderr with exit code 2."""


def decode_line(raw: bytes | str, name: str, number: int) -> str:
    """One input line as text: UTF-8 (a byte-order mark on the first line is dropped), or an
    InputError naming the line, the byte and its column."""
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{name}:{number}: not UTF-8 text (byte 0x{raw[error.start]:02x} at column {error.start + 1}); "
            "convert the file first, e.g. iconv -f latin1 -t utf-8"
        ) from None


def read_jsonl(stream: IO[str] | IO[bytes], name: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for every non-blank line of a text or a byte stream."""
    for number, raw in enumerate(stream, start=1):
        line = decode_line(raw, name, number)
        if not line.strip():
            continue
        try:
            obj = jsonio.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{name}:{number}: malformed JSON: {error.msg} (column {error.colno})") from None
        except jsonio.JSONTooComplex as error:
            raise InputError(f"{name}:{number}: {error}") from None
        yield number, obj


def input_rows(path: str) -> list[tuple[int, Any]]:
    if path == "-":
        return list(read_jsonl(getattr(sys.stdin, "buffer", sys.stdin), "<stdin>"))
    try:
        with open(path, "rb") as stream:
            return list(read_jsonl(stream, path))
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from None
