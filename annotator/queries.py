"""The annotator app's hand-written SQL, each behind a named function whose docstring gives the
benchmark figure that justifies it beside the ORM alternative's (measured on the benchmark
machine, `python benchmarks/run.py workspace`). Everything else in the app uses the ORM."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.utils import timezone

from annotator.models import Item

JSON_COLUMNS = {"appraisals", "metadata"}  # written as JSON text


def items_copy(rows: list[dict[str, Any]], source: str, columns: tuple[str, ...]) -> bool:
    """Insert new items with COPY when the database is PostgreSQL; False (nothing written) on any
    other database, where the caller's ``bulk_create`` is as fast. ``columns`` start with
    "source"; each row holds the others.

    Justified by the workspace benchmark (import crowd-enVent, 5,400 rows, PostgreSQL, median of
    5; benchmarks/results/workspace.json): 0.27 s with COPY against 0.62 to 0.68 s with
    ``bulk_create(batch_size=2000)``, which spends its time binding parameters there (target
    < 0.5 s; measured twice each, alternating, the same hour)."""
    if connection.vendor != "postgresql":
        return False
    now = timezone.now()
    names = ", ".join((*columns, "created_at"))
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {Item._meta.db_table} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            values = [json.dumps(row[c]) if c in JSON_COLUMNS else row[c] for c in columns[1:]]
            copy.write_row((source, *values, now))
    return True
