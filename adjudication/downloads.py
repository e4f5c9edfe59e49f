"""Tables as CSV downloads, for every page that offers one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.http import HttpResponse
from django.utils.http import content_disposition_header
from django.utils.text import slugify

from annotator.csv_cells import csv_writer


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> HttpResponse:
    """The rows as a CSV attachment, named by a slug of ``filename`` (a round named with a quote or a
    newline, as older releases allowed, still downloads under a plain name), in Django's header; every
    cell, header included, through annotator.csv_cells (text that starts a formula is quoted)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = slugify(filename.removesuffix(".csv")) or "table"  # a slug: no quote, space or control character
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=f"{name}.csv")
    writer = csv_writer(response)
    writer.writerow(header)
    writer.writerows(rows)
    return response
