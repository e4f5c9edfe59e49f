"""Free-text search over searched, in the database (SQLite's FTS5 table kept by triggers, PostgreSQL's
GIN index; the PostgreSQL suite runs these too): every word must be found in the item's id, text
or masked text, as a word or its start; the lists and the API offer it as ?q=."""

import re

import pytest
from django.db import IntegrityError, connection
from django.db.models import Func, Subquery, Value
from django.urls import reverse

from adjudication.gold.services import gold_sync
from annotator.imports import ITEM_COLUMNS
from annotator.models import Item
from annotator.queries import ITEM_SEARCH_INSERT_TRIGGER, items_insert_many
from annotator.sampling import item_set_from_items
from annotator.search import items_searched

pytestmark = pytest.mark.django_db

TEXTS = {
    "s-1": "I felt frustrated when the bus left without me.",
    "s-2": "My sister passed her driving test at last.",
    "s-3": "The bus driver smiled at me and waited.",
}


@pytest.fixture
def searched():
    made = [
        Item.objects.create(
            source_id=k, text=t, masked_text=t.replace("frustrated", "[MASK]"), reference_label="joy"
        )
        for k, t in TEXTS.items()
    ]
    return {i.source_id: i for i in made}


def found(q: str) -> list[str]:
    return sorted(items_searched(Item.objects.all(), q).values_list("source_id", flat=True))


def test_every_word_must_match_as_a_word_or_its_start(searched):
    assert found("bus") == ["s-1", "s-3"]
    assert found("bus smiled") == ["s-3"]
    assert found("frustr") == ["s-1"]  # the start of a word
    assert found("BUS Driver") == ["s-3"]  # case does not matter
    assert found("train") == []
    assert found("s-2") == ["s-2"]  # an item's id
    assert found("") == ["s-1", "s-2", "s-3"]


def test_operators_and_quotes_are_words_to_the_search_not_syntax(searched):
    assert found('bus" OR "sister') == []  # no OR: every word must match
    assert found("bus NOT smiled") == []
    assert found("*bus* (left)") == ["s-1"]


def test_the_index_follows_an_edit_and_a_deletion(searched):
    item = searched["s-2"]
    item.text = item.masked_text = "A parcel arrived for the neighbours."
    item.save()
    assert found("sister") == [] and found("parcel") == ["s-2"]
    searched["s-1"].delete()
    assert found("bus") == ["s-3"]


def test_the_item_set_page_searches_and_pages_its_items(client, admin_user, searched):
    item_set = item_set_from_items(name="demo", items=list(searched.values()))
    client.force_login(admin_user)
    listing = client.get(reverse("manage_item_sets")).content.decode()
    assert reverse("manage_item_set", args=[item_set.pk]) in listing  # the set opens from the list
    url = reverse("manage_item_set", args=[item_set.pk])
    page = client.get(url).content.decode()
    assert re.findall(r'<tr data-item="([^"]+)"', page) == ["s-1", "s-2", "s-3"]
    page = client.get(url, {"q": "bus"}).content.decode()
    assert re.findall(r'<tr data-item="([^"]+)"', page) == ["s-1", "s-3"] and "2 of 3 items match" in page
    refused = client.get(url, {"q": " ".join(["word"] * 9)})
    assert refused.status_code == 400 and "at most 8 words" in refused.content.decode()
    assert client.get(url, {"q": "?!"}).status_code == 400


def test_the_api_lists_the_items_a_search_finds(client, admin_user, searched):
    client.force_login(admin_user)
    answer = client.get(reverse("api_items"), {"q": "bus left"}).json()
    assert [row["source_id"] for row in answer["results"]] == ["s-1"]
    refused = client.get(reverse("api_items"), {"q": "!!"})
    assert refused.status_code == 400 and "q" in refused.json()


def test_the_gold_and_conflict_lists_search_the_rounds_items(client, adjudicator, submitted):
    gold_sync(submitted)
    t3 = Item.objects.get(source_id="t3-0")
    t3.text = t3.masked_text = "The orchestra played our song at the wedding."
    t3.save()
    client.force_login(adjudicator)
    gold = client.get(reverse("gold_list", args=[submitted.pk]), {"q": "orchestra"}).content.decode()
    assert re.findall(r'<tr data-item="([^"]+)"', gold) == ["t3-0"]
    conflicts = client.get(
        reverse("conflicts", args=[submitted.pk]), {"q": "orchestra wedd"}
    ).content.decode()
    assert re.findall(r'<tr data-item="(\d+)"', conflicts) == [str(t3.pk)]
    none = client.get(reverse("conflicts", args=[submitted.pk]), {"q": "zebra"}).content.decode()
    assert 'id="conflict-count">0<' in none
    assert client.get(reverse("gold_list", args=[submitted.pk]), {"q": "!!"}).status_code == 400
    # the API's lists search as their pages do
    api_gold = client.get(reverse("api_gold", args=[submitted.pk]), {"q": "orchestra"}).json()
    assert [row["item_id"] for row in api_gold["results"]] == [t3.pk]
    api_conflicts = client.get(reverse("api_conflicts", args=[submitted.pk]), {"q": "wedding"}).json()
    assert api_conflicts["count"] == 1 and api_conflicts["results"][0]["item"] == t3.pk


def test_the_query_reads_the_very_expression_the_migration_indexes():
    import importlib

    from annotator.queries import ITEM_SEARCH_DOCUMENT

    migration = importlib.import_module("annotator.migrations.0008_item_search")
    assert migration.PG_DOCUMENT == ITEM_SEARCH_DOCUMENT


def test_the_insert_trigger_an_import_puts_back_is_the_migrations():
    import importlib

    migration = importlib.import_module("annotator.migrations.0008_item_search")
    assert migration.SQLITE_TRIGGERS[0] == ITEM_SEARCH_INSERT_TRIGGER


TRIGGER = "annotator_item_search_insert"
SQLITE_ONLY = pytest.mark.skipif(
    connection.vendor != "sqlite",
    reason="SQLite's search table and its trigger; PostgreSQL indexes by itself",
)


def insert_trigger() -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = %s", [TRIGGER])
        row = cursor.fetchone()
    return row and row[0]


def new_rows(*pairs: tuple[str, str]) -> list[dict]:
    return [
        {
            "source_id": k,
            "text": t,
            "masked_text": t,
            "reference_label": "joy",
            "appraisals": {},
            "metadata": {},
        }
        for k, t in pairs
    ]


@SQLITE_ONLY
def test_an_import_indexes_its_items_at_once_and_puts_the_insert_trigger_back(searched):
    assert items_insert_many(
        new_rows(("n-1", "A kite stuck in the oak."), ("n-2", "The oak fell.")), "new", ITEM_COLUMNS
    )
    assert found("oak") == ["n-1", "n-2"] and found("bus") == ["s-1", "s-3"]  # the new ones, once each
    assert insert_trigger() == ITEM_SEARCH_INSERT_TRIGGER
    Item.objects.create(source_id="n-3", text="An oak seedling.", masked_text="An oak seedling.")
    assert found("oak") == ["n-1", "n-2", "n-3"]  # a later insert is indexed by the trigger again


@SQLITE_ONLY
def test_a_failed_import_leaves_the_insert_trigger_in_place(searched):
    duplicate = new_rows(("n-1", "A kite stuck in the oak."), ("s-2", "Again."))
    with pytest.raises(IntegrityError):
        items_insert_many(duplicate, "crowd-enVent", ITEM_COLUMNS)  # s-2 is already one
    assert insert_trigger() == ITEM_SEARCH_INSERT_TRIGGER and found("oak") == []
    Item.objects.create(source_id="n-3", text="An oak seedling.", masked_text="An oak seedling.")
    assert found("oak") == ["n-3"]


POSTGRESQL_ONLY = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's GIN index; SQLite searches its FTS5 table"
)


def plan(queryset) -> str:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # three rows: the planner would read them all
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@POSTGRESQL_ONLY
def test_a_search_of_the_items_is_a_condition_on_their_own_rows_read_from_the_index(searched):
    """Not ``id IN (SELECT id FROM annotator_item ...)``: joined to itself, a word in thousands of
    items had PostgreSQL sort every item by id and check each (benchmarks/bench_search.py)."""
    listed = items_searched(Item.objects.all(), "bus dri").order_by("source_id")
    assert [i.source_id for i in listed] == ["s-3"]
    explained = plan(listed)
    assert "item_search_idx" in explained, explained  # the very expression the index holds
    assert explained.count("annotator_item") == 1, explained  # the items once, not joined to themselves


@POSTGRESQL_ONLY
def test_a_search_of_the_items_holds_inside_another_query_of_items(searched):
    """Inside another query of items the searched ones are U0, and the condition reads their
    columns, not the outer row's: each item counts the two that hold "bus"."""
    matching = items_searched(Item.objects.all(), "bus").order_by().values(n=Func(Value(1), function="count"))
    counted = Item.objects.annotate(matching=Subquery(matching)).order_by("source_id")
    assert " U0" in str(counted.query)  # the case this is about
    assert [(i.source_id, i.matching) for i in counted] == [("s-1", 2), ("s-2", 2), ("s-3", 2)]
