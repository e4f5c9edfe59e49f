"""Tables as CSV downloads, for every page that offers one."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from typing import Any

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def csv_response(filename: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> HttpResponse:
    """The rows as a CSV attachment. The header is Django's, which quotes or percent-encodes the
    name: a round named with a quote or a newline (older releases allowed one) still downloads."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    writer = csv.writer(response)
    writer.writerow(header)
    writer.writerows(rows)
    return response
