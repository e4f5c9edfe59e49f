"""The annotator app's hand-written SQL, each behind a named function whose docstring gives the
benchmark figure that justifies it beside the ORM alternative's (measured on the benchmark
machine, `python benchmarks/run.py workspace`). Everything else in the app uses the ORM."""

from __future__ import annotations

import json
import weakref
from typing import Any

from django.db import connection, transaction
from django.db.models import BooleanField, Field, Model, Q, QuerySet
from django.db.models.expressions import Expression, RawSQL
from django.utils import timezone

from annotator.models import (
    Annotation,
    AnnotationRevision,
    Assignment,
    Item,
    ItemSetMember,
    ParserPrediction,
    Round,
)

JSON_COLUMNS = {"appraisals", "metadata"}  # written as JSON text
#: the words of an item on PostgreSQL: exactly the expression migration annotator 0008 indexes
#: (tests/annotator/test_item_search.py compares them), or the index is not used
ITEM_SEARCH_DOCUMENT = (
    "to_tsvector('simple'::regconfig, regexp_replace(coalesce(source_id, '') || ' ' || coalesce(text, '') "
    "|| ' ' || coalesce(masked_text, ''), '[^[:alnum:]]+', ' ', 'g'))"
)

#: the trigger that puts an inserted item into SQLite's search table: exactly migration annotator
#: 0008's (tests/annotator/test_item_search.py compares them); ``items_insert_many`` lifts it while
#: it inserts, and puts it back
ITEM_SEARCH_INSERT_TRIGGER = (
    "CREATE TRIGGER annotator_item_search_insert AFTER INSERT ON annotator_item BEGIN "
    "INSERT INTO annotator_item_search(rowid, source_id, text, masked_text) "
    "VALUES (new.id, new.source_id, new.text, new.masked_text); END"
)


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
        connection.wrap_database_errors,  # psycopg's own cursor: its errors as Django's (IntegrityError)
        cursor.cursor.copy(f"COPY {Item._meta.db_table} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            values = [json.dumps(row[c]) if c in JSON_COLUMNS else row[c] for c in columns[1:]]
            copy.write_row((source, *values, now))
    return True


def items_insert_many(rows: list[dict[str, Any]], source: str, columns: tuple[str, ...]) -> bool:
    """Insert new items with one prepared INSERT executed for every row (no model instance per
    row) when the database is SQLite; False (nothing written) on any other database, where
    ``items_copy`` or ``bulk_create`` serve. Arguments as for ``items_copy``.

    Justified by the api_import benchmark (benchmarks/bench_api_import.py; 5,400 crowd-enVent rows,
    in-process, median of 5, alternating with ``bulk_create(batch_size=2000)``, on a machine under
    load 8 on 2 cores): 183 ms against 930 ms on SQLite. Indexing the new items for the search
    in one statement afterwards (bench_workspace's import, the same rows, median of 5, alternating
    on a quiet machine): 0.20 and 0.21 s against 0.35 and 0.36 s through the trigger."""
    if connection.vendor != "sqlite":
        return False
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    table = Item._meta.db_table
    names = ", ".join((*columns, "created_at"))
    marks = ", ".join(["%s"] * (len(columns) + 1))
    values = [
        (source, *(json.dumps(row[c]) if c in JSON_COLUMNS else row[c] for c in columns[1:]), now)
        for row in rows
    ]
    # The new items go into the search table in one statement once they are in, not one by one
    # through the insert trigger (5,400 crowd-enVent rows: 15 ms against 100 ms in sqlite3 alone).
    # The trigger is lifted and put back in this transaction, which holds the write lock from its
    # start (IMMEDIATE): no other connection inserts meanwhile or ever finds it missing.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER annotator_item_search_insert")
        cursor.execute(f"SELECT coalesce(max(id), 0) FROM {table}")
        (last,) = cursor.fetchone()
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", values)
        cursor.execute(
            "INSERT INTO annotator_item_search(rowid, source_id, text, masked_text) "
            f"SELECT id, source_id, text, masked_text FROM {table} WHERE id > %s",
            [last],
        )
        cursor.execute(ITEM_SEARCH_INSERT_TRIGGER)
    return True


def item_set_members_insert(item_set_id: int, item_ids: list[int]) -> None:
    """Add ``item_ids`` to an item set in this order (positions 0, 1, ...): COPY on PostgreSQL,
    one prepared INSERT for all rows elsewhere; no model instance per row.

    Justified by the api_import benchmark (benchmarks/bench_api_import.py; 5,400 members,
    in-process, median of 5, alternating with the ORM, on a machine under load 8 on 2 cores): 50 ms
    against 512 ms with ``bulk_create`` on SQLite, 51 ms (COPY) against 402 ms on PostgreSQL."""
    table = ItemSetMember._meta.db_table
    rows = [(item_set_id, item_id, position) for position, item_id in enumerate(item_ids)]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with (
                connection.wrap_database_errors,  # psycopg's own cursor: its errors as Django's
                cursor.cursor.copy(f"COPY {table} (item_set_id, item_id, position) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
            return
        cursor.executemany(f"INSERT INTO {table} (item_set_id, item_id, position) VALUES (%s, %s, %s)", rows)


def assignments_rotate(*, round_id: int, item_set_id: int, annotator_ids: list[int], per_item: int) -> int:
    """Insert a round's assignments in one INSERT ... SELECT over its item set: the i-th item (in
    position order) goes to the annotators at places (i * per_item + j) % n of the pool, for j below
    per_item, at queue position (i * per_item + j) // n, which is what a loop handing them out in
    turn gives (annotator.services.round_create says why). How many rows were inserted.

    Justified by the api_import benchmark (benchmarks/bench_api_import.py; 5,400 items, two
    annotators, in-process, median of 5, alternating with the ORM loop it replaces, on a machine
    under load 8 on 2 cores): 77 ms against 1,156 ms with ``bulk_create`` on SQLite, 257 ms against
    866 ms on PostgreSQL."""
    n = len(annotator_ids)
    if not n or per_item < 1:
        return 0
    slots = ", ".join(["(%s)"] * per_item)
    pool = ", ".join(["(%s, %s)"] * n)
    sql = f"""
        INSERT INTO {Assignment._meta.db_table} (round_id, item_id, annotator_id, position, status)
        SELECT %s, m.item_id, p.column2, (m.i * %s + s.column1) / %s, %s
        FROM (
            SELECT item_id, ROW_NUMBER() OVER (ORDER BY position, id) - 1 AS i
            FROM {ItemSetMember._meta.db_table} WHERE item_set_id = %s
        ) AS m
        CROSS JOIN (VALUES {slots}) AS s
        JOIN (VALUES {pool}) AS p ON p.column1 = (m.i * %s + s.column1) %% %s
        ORDER BY m.i, s.column1
    """
    params: list[object] = [round_id, per_item, n, Assignment.Status.PENDING, item_set_id]
    params += list(range(per_item))
    params += [v for place, pk in enumerate(annotator_ids) for v in (place, pk)]
    params += [per_item, n]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def assignment_with_annotation(user_id: int, assignment_id: int) -> Assignment | None:
    """The assignment if it is this user's (else None), in one statement with its round, its item,
    its annotation (None when it has none; ``assignment.annotation`` then raises DoesNotExist, as
    after ``select_related``) and ``newest_prefill``: the newest legal prediction of the round's
    prefill parser for the item read from the round's text field (or from an unrecorded one),
    whatever the round's mode (annotator.selectors.prefill_of decides whether a page may show
    it). Model instances as the ORM would build them, through the same
    converters.

    Justified by the load benchmark (benchmarks/bench_load.py; the API's fetch and submit read this
    on every request): in-process on PostgreSQL, 0.55 ms against 1.68 ms for the same query built
    by the ORM (``select_related`` of three tables and the prediction as a Subquery), of which
    0.94 ms was building and compiling it; measured 300 times each, the same hour."""
    models: list[tuple[type[Model], str]] = [(Assignment, "a"), (Round, "r"), (Item, "i"), (Annotation, "n")]
    columns = ", ".join(f"{alias}.{f.column}" for model, alias in models for f in model._meta.concrete_fields)
    sql = f"""
        SELECT {columns}, (
            SELECT p.explication FROM {ParserPrediction._meta.db_table} p
            WHERE p.item_id = a.item_id AND p.parser = r.prefill_parser AND p.legal = %s
              AND p.text_field IN (r.text_field, '')
            ORDER BY p.created_at DESC LIMIT 1
        )
        FROM {Assignment._meta.db_table} a
        JOIN {Round._meta.db_table} r ON r.id = a.round_id
        JOIN {Item._meta.db_table} i ON i.id = a.item_id
        LEFT JOIN {Annotation._meta.db_table} n ON n.assignment_id = a.id
        WHERE a.id = %s AND a.annotator_id = %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [True, assignment_id, user_id])
        row = cursor.fetchone()
    if row is None:
        return None
    built = []
    start = 0
    for model, _ in models:
        fields = model._meta.concrete_fields
        values = row[start : start + len(fields)]
        start += len(fields)
        present = values[0] is not None  # the annotation's columns are NULL when it has none
        built.append(model.from_db(connection.alias, None, _converted(fields, values)) if present else None)
    assignment, round_, item, annotation = built
    Assignment.round.field.set_cached_value(assignment, round_)
    Assignment.item.field.set_cached_value(assignment, item)
    Assignment.annotation.related.set_cached_value(assignment, annotation)
    if annotation is not None:
        Annotation.assignment.field.set_cached_value(annotation, assignment)
    explication = ParserPrediction._meta.get_field("explication")
    assignment.newest_prefill = _converted((explication,), row[start:])[0]
    return assignment


def _converted(fields: tuple[Field, ...], values: Any) -> list[Any]:
    """Database values as model field values, through the converters the ORM's compiler applies
    (the backend's for the field's type, then the field's own, e.g. JSON text to objects)."""
    out = []
    for (column, converters), value in zip(_converters(fields), values, strict=True):
        for convert in converters:
            value = convert(value, column, connection)
        out.append(value)
    return out


#: the converters of each field list, per connection's operations (whose bound methods some of
#: them are), looked up once: looking them up for every value cost a fetch and its submit about
#: 1 ms of their 8.7 ms of CPU on PostgreSQL (in-process, 30 pairs of runs alternating with and
#: without, 2026-11-28: the difference's median 0.96 ms, its quartiles 0.18 and 1.69 ms)
_CONVERTERS: weakref.WeakKeyDictionary[Any, dict[tuple[Field, ...], list[tuple[Any, list[Any]]]]] = (
    weakref.WeakKeyDictionary()
)


def _converters(fields: tuple[Field, ...]) -> list[tuple[Any, list[Any]]]:
    by_fields = _CONVERTERS.setdefault(connection.ops, {})
    found = by_fields.get(fields)
    if found is None:
        found = []
        for field in fields:
            column = field.get_col(field.model._meta.db_table)
            converters = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
            found.append((column, converters))
        by_fields[fields] = found
    return found


def item_search(terms: list[str]) -> QuerySet | RawSQL:
    """The ids of the items whose id, text or masked text hold every one of ``terms``, each as a
    word or the start of one ("frustr" finds "frustrated"), for ``pk__in=``: read from the FTS5
    table on SQLite and the GIN index on PostgreSQL (migration annotator 0008). ``terms`` are
    words (``annotator.search.search_terms``): no operator reaches the database.

    Justified by the search benchmark (benchmarks/bench_search.py; 100,000 items from
    crowd-enVent's texts, a page of 50 and its count, p95 over 200 searches of one to three words
    drawn from the texts): on SQLite, which searches every list this way, p95 31.5 ms on
    2026-11-29 (a quiet machine) against 110.3 ms for ``icontains`` on the three columns, which
    reads every row. On PostgreSQL a list of items themselves searches through
    ``item_search_condition``, and this serves the lists of rows that name an item (gold,
    conflicts), which the benchmark does not search: its figure for this form, measured on lists
    of items before the condition replaced it there, p95 71.2 and 74.3 ms that morning against
    168.5 ms for ``icontains``. On a stand-in for those lists (a table naming each of the 100,000
    items once, EXPLAIN ANALYZE the same day), a page of 50 and its count: 26.6 and 17.9 ms for
    "surprise" (3,401 items), 4.0 and 40.6 ms for "and" (32,230), 0.4 and 2.0 ms for "frustr"."""
    if connection.vendor == "sqlite":
        expression = " ".join(f'"{term}"*' for term in terms)
        return RawSQL(
            "SELECT rowid FROM annotator_item_search WHERE annotator_item_search MATCH %s", [expression]
        )
    if connection.vendor == "postgresql":
        return RawSQL(
            f"SELECT id FROM {Item._meta.db_table} WHERE {ITEM_SEARCH_DOCUMENT} @@ to_tsquery('simple', %s)",
            [_tsquery(terms)],
        )
    match = Q()
    for term in terms:
        match &= Q(source_id__icontains=term) | Q(text__icontains=term) | Q(masked_text__icontains=term)
    return Item.objects.filter(match).values("pk")


class _ItemSearchMatch(Expression):
    """``ITEM_SEARCH_DOCUMENT @@ to_tsquery(...)`` on a query of items, its columns named by the
    items' alias in that query (``annotator_item``, or ``U0`` once the query is a subquery of
    another): unqualified, a joined table's own ``text`` would make them ambiguous, and named
    ``annotator_item`` they would point out of a subquery. PostgreSQL still sees the indexed
    expression."""

    conditional = True
    output_field = BooleanField()

    def __init__(self, tsquery: str) -> None:
        super().__init__()
        self.tsquery = tsquery

    def as_sql(self, compiler, connection):
        # the first alias is the query's base table, the items (Django's Query.base_table, read
        # here rather than cached: a subquery's aliases change after it is built)
        items = compiler.quote_name_unless_alias(next(iter(compiler.query.alias_map)))
        # each of the document's three columns sits inside a coalesce( of its own
        document = ITEM_SEARCH_DOCUMENT.replace("coalesce(", f"coalesce({items}.")
        return f"{document} @@ to_tsquery('simple', %s)", [self.tsquery]


def item_search_condition(terms: list[str]) -> _ItemSearchMatch | None:
    """On PostgreSQL, ``item_search`` as a condition on the items' own rows, for a query of items
    (``Item.objects.filter(...)``, joins allowed); None elsewhere, where ``item_search`` serves.

    Justified by the search benchmark (benchmarks/bench_search.py, as in ``item_search``): the
    items joined to themselves through ``id IN (...)``, a word found in 3,000 items or more had
    PostgreSQL sort all 100,000 by the page's order and check each one it walked (the page's
    query 69 ms and its count 25 ms for "surprise" in EXPLAIN ANALYZE); as a condition, both read
    the matches from the index (3 and 6 ms). Alternating runs on 2026-11-29: p95 27.9 and 27.3 ms
    against 74.3 and 71.2 ms joined to itself (and 116.1 ms on 2026-11-27's busier machine)."""
    if connection.vendor != "postgresql":
        return None
    return _ItemSearchMatch(_tsquery(terms))


def _tsquery(terms: list[str]) -> str:
    """Every word, each as a word or the start of one, in to_tsquery's syntax (``terms`` hold
    letters and digits only: ``annotator.search.search_terms``)."""
    return " & ".join(f"{term}:*" for term in terms)


def annotation_save_in_one_statement() -> bool:
    """Whether ``annotation_save`` can write a save here: on PostgreSQL, whose data-modifying
    WITH queries make the claim, the revision and the status one statement. Elsewhere the caller
    writes them with the ORM in a transaction.

    Justified by the load benchmark's figures in ``annotation_save``'s docstring (5.8 and 6.8 ms
    of server CPU a request against 7.5 and 8.0 ms)."""
    return connection.vendor == "postgresql"


def annotation_save(
    *,
    assignment_id: int,
    annotation_id: int | None,
    base_version: int,
    fields: dict[str, Any],
    revision: dict[str, Any],
    now: Any,
) -> int | None:
    """One annotator's save as one statement (PostgreSQL; ``annotation_save_in_one_statement``):
    the claim of the annotation, its revision and the assignment's status, each written only if
    the claim was won. The claim is the insert of a first save (``annotation_id`` None; of two
    racing first saves the unique assignment lets one in) or the update of the annotation from
    ``base_version`` to the next (of two racing saves one matches). ``fields`` are the
    annotation's columns by field name, ``revision`` the revision's (its annotation and version
    come from the claim). The annotation's id when the claim was won; None when another save came
    first, and then nothing is written. Values are prepared by each field, as the ORM prepares them.

    Justified by the load benchmark (benchmarks/bench_load.py; 50 annotators x 60 s through
    `serve` on PostgreSQL, runs alternating with the ORM's transaction, 2026-11-28, on a machine
    that ran the load client at 0.74 to 0.87 ms a request): 5.8 and 6.8 ms of the server's CPU a
    request against 7.5 and 8.0 ms, 228 and 189 requests/s against 185 and 169. In-process, a fetch
    and its submit: 12.1 ms of CPU against 15.2 ms (medians of 6 alternating runs of 60)."""
    table, revisions, assignments = (
        Annotation._meta.db_table,
        AnnotationRevision._meta.db_table,
        Assignment._meta.db_table,
    )
    values = {name: _prepared(Annotation, name, value) for name, value in fields.items()}
    values["updated_at"] = _prepared(Annotation, "updated_at", now)
    columns = [Annotation._meta.get_field(name).column for name in values]
    params: list[Any] = []
    if annotation_id is None:
        names = ", ".join(["assignment_id", "version", *columns])
        marks = ", ".join(["%s"] * (len(columns) + 2))
        claim = f"""INSERT INTO {table} ({names}) VALUES ({marks})
            ON CONFLICT (assignment_id) DO NOTHING RETURNING id, version"""
        params += [assignment_id, 1, *values.values()]
    else:
        sets = ", ".join(f"{column} = %s" for column in columns)
        claim = f"""UPDATE {table} SET {sets}, version = version + 1
            WHERE id = %s AND version = %s RETURNING id, version"""
        params += [*values.values(), annotation_id, base_version]
    written = {name: _prepared(AnnotationRevision, name, value) for name, value in revision.items()}
    written["created_at"] = _prepared(AnnotationRevision, "created_at", now)
    revision_columns = [AnnotationRevision._meta.get_field(name).column for name in written]
    sql = f"""
        WITH claim AS ({claim}),
        revision AS (
            INSERT INTO {revisions} (annotation_id, version, {", ".join(revision_columns)})
            SELECT id, version, {", ".join(["%s"] * len(written))} FROM claim
        ),
        status AS (
            UPDATE {assignments} SET status = %s WHERE id = %s AND EXISTS (SELECT 1 FROM claim)
        )
        SELECT id FROM claim
    """
    params += [*written.values(), Assignment.Status.DONE, assignment_id]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return row[0] if row else None


def _prepared(model: type[Model], name: str, value: Any) -> Any:
    """``value`` as the ORM sends it for the field ``name`` of ``model`` (JSON adapted, dates made
    the database's)."""
    return model._meta.get_field(name).get_db_prep_save(value, connection)
