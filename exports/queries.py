"""The jobs app's hand-written SQL, each behind a named function whose docstring gives the
benchmark figure that justifies it beside the ORM alternative's (measured on the benchmark
machine, `python benchmarks/run.py export`). Everything else in the app uses the ORM."""

from __future__ import annotations

from django.db import connections
from django.db.models import QuerySet


def gold_batch_rows(query: QuerySet) -> list[tuple]:
    """The rows of one export batch (``exports.records.gold_batch_query``, built by the ORM),
    read with a plain cursor: JSON columns come back as the database's text, which the records
    reuse as it is.

    Justified by the export benchmark (100,000 gold items, 715,383 lines, cached verification,
    SQLite; benchmarks/results/export.json): 7.1 s with this against 9.6 s iterating the same
    ``values_list``, which decodes every JSON column only for the record to encode it again
    (the same database, the same hour, on a loaded machine whose quiet figure is 2.9 s; target
    10 s, and today's figure +-40%). The line judgements, by contrast, are read through the ORM:
    one aggregated row per text in hand-written SQL was 15.9 s against 16.9 s for the first
    export after verification, within the machine's spread."""
    sql, params = query.query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
