"""Free-text search over items (their id, text and masked text), in the database: an FTS5 table
kept by triggers on SQLite, a GIN index on the same words on PostgreSQL (annotator.queries.
item_search reads them). Neither is a model: Django knows nothing of them, so a later migration
that makes SQLite rebuild annotator_item (an altered column) must run ``SQLITE_TRIGGERS`` again;
tests/annotator/test_item_search.py fails when the triggers are gone."""

from django.db import migrations

#: the words searched, as PostgreSQL reads them (annotator.queries.ITEM_SEARCH_DOCUMENT: the same text)
PG_DOCUMENT = (
    # every run of other characters a space, as SQLite's unicode61 tokenizer splits ("s-2" is the
    # words s and 2; PostgreSQL's parser alone would read "-2" as a number)
    "to_tsvector('simple'::regconfig, regexp_replace(coalesce(source_id, '') || ' ' || coalesce(text, '') "
    "|| ' ' || coalesce(masked_text, ''), '[^[:alnum:]]+', ' ', 'g'))"
)

SQLITE_TABLE = [
    # external content: the words are indexed, the texts stay only in annotator_item
    "CREATE VIRTUAL TABLE annotator_item_search USING fts5(source_id, text, masked_text, "
    "content='annotator_item', content_rowid='id', tokenize='unicode61 remove_diacritics 2')",
    "INSERT INTO annotator_item_search(annotator_item_search) VALUES ('rebuild')",
]
SQLITE_TRIGGERS = [
    "CREATE TRIGGER annotator_item_search_insert AFTER INSERT ON annotator_item BEGIN "
    "INSERT INTO annotator_item_search(rowid, source_id, text, masked_text) "
    "VALUES (new.id, new.source_id, new.text, new.masked_text); END",
    "CREATE TRIGGER annotator_item_search_delete AFTER DELETE ON annotator_item BEGIN "
    "INSERT INTO annotator_item_search(annotator_item_search, rowid, source_id, text, masked_text) "
    "VALUES ('delete', old.id, old.source_id, old.text, old.masked_text); END",
    "CREATE TRIGGER annotator_item_search_update AFTER UPDATE ON annotator_item BEGIN "
    "INSERT INTO annotator_item_search(annotator_item_search, rowid, source_id, text, masked_text) "
    "VALUES ('delete', old.id, old.source_id, old.text, old.masked_text); "
    "INSERT INTO annotator_item_search(rowid, source_id, text, masked_text) "
    "VALUES (new.id, new.source_id, new.text, new.masked_text); END",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS annotator_item_search_insert",
    "DROP TRIGGER IF EXISTS annotator_item_search_delete",
    "DROP TRIGGER IF EXISTS annotator_item_search_update",
    "DROP TABLE IF EXISTS annotator_item_search",
]
PG_CREATE = [f"CREATE INDEX IF NOT EXISTS item_search_idx ON annotator_item USING GIN ({PG_DOCUMENT})"]
PG_DROP = ["DROP INDEX IF EXISTS item_search_idx"]


def _run(statements: dict[str, list[str]]):
    def run(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("annotator", "0007_annotation_draft"),
    ]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_TABLE + SQLITE_TRIGGERS, "postgresql": PG_CREATE}),
            _run({"sqlite": SQLITE_DROP, "postgresql": PG_DROP}),
        ),
    ]
