"""Two admins (or two scripts) creating the same thing at once (found by a walkthrough that sent six
requests together: 500s). The loser of a race for a name gets the 409 a taken name gets; an import
of rows that another import has just added reuses them, as a second import of the file would.
The race is run on one connection: the other request's row appears right after this one's check
(and where this one's transaction is rolled back, goes with it: the tests check that nothing of
this request's own is left)."""

import io
import json

import pytest
from django.db import connection
from django.urls import reverse

from annotator.models import Assignment, Item, ItemSet, ItemSetMember, Round
from tests.factories import TEXTS

pytestmark = pytest.mark.django_db


def rows(n: int, source_prefix: str = "race") -> bytes:
    lines = []
    for i in range(n):
        _, emotion, text, masked = TEXTS[i % len(TEXTS)]
        lines.append(
            json.dumps(
                {"text_id": f"{source_prefix}-{i}", "emotion": emotion, "text": text, "masked_text": masked}
            )
        )
    return "\n".join(lines).encode()


def upload(client, data: bytes, **fields):
    f = io.BytesIO(data)
    f.name = "race.jsonl"
    return client.post(reverse("api_imports"), {"file": f, **fields})


def after_first(select_of: str, then):
    """Run ``then`` once, right after the first SELECT whose SQL holds ``select_of``."""
    done = []

    def wrapper(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not done and sql.lstrip().startswith("SELECT") and select_of in sql:
            done.append(True)
            then()
        return result

    return connection.execute_wrapper(wrapper), done


def test_an_import_whose_new_rows_another_import_adds_meanwhile_reuses_them(client, admin_user):
    client.force_login(admin_user)

    def other_import_adds_the_first_row():
        _, emotion, text, masked = TEXTS[0]
        Item.objects.create(
            source="race", source_id="race-0", text=text, masked_text=masked, reference_label=emotion
        )

    race, ran = after_first('FROM "annotator_item"', other_import_adds_the_first_row)
    with race:
        answer = upload(client, rows(4), source="race", item_set="race-set")
    assert ran and answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["rows"], body["created"], body["unchanged"]) == (4, 3, 1)
    assert Item.objects.filter(source="race").count() == 4
    assert ItemSet.objects.get(name="race-set").members.count() == 4


def test_an_item_set_name_taken_meanwhile_is_a_409(client, admin_user, items):
    client.force_login(admin_user)
    race, ran = after_first('FROM "annotator_itemset"', lambda: ItemSet.objects.create(name="twin", size=0))
    with race:
        answer = client.post(
            reverse("api_item_sets"),
            {"name": "twin", "item_ids": [items[0].pk]},
            content_type="application/json",
        )
    assert ran and answer.status_code == 409, answer.content
    assert "already exists" in answer.json()["name"][0]
    assert not ItemSetMember.objects.exists()


def test_an_import_whose_item_set_name_is_taken_meanwhile_is_a_409_and_writes_nothing(client, admin_user):
    client.force_login(admin_user)
    race, ran = after_first('FROM "annotator_itemset"', lambda: ItemSet.objects.create(name="twin", size=0))
    with race:
        answer = upload(client, rows(3), source="race", item_set="twin")
    assert ran and answer.status_code == 409, answer.content
    assert "already exists" in answer.json()["item_set"][0]
    assert not Item.objects.filter(source="race").exists()


def test_a_round_name_taken_meanwhile_is_a_409(client, admin_user, items, annotator, other_annotator):
    client.force_login(admin_user)
    item_set = ItemSet.objects.create(name="s", size=0)
    ItemSet.objects.filter(pk=item_set.pk).update(size=len(items))
    for p, item in enumerate(items):
        item_set.members.create(item=item, position=p)
    other = ItemSet.objects.create(name="other", size=0)
    race, ran = after_first(
        'FROM "annotator_round"', lambda: Round.objects.create(name="twin", item_set=other)
    )
    with race:
        answer = client.post(
            reverse("api_rounds"),
            {"name": "twin", "item_set": item_set.pk, "annotators": ["alice", "bob"], "mode": "blind"},
            content_type="application/json",
        )
    assert ran and answer.status_code == 409, answer.content
    assert "already exists" in answer.json()["name"][0]
    assert not Assignment.objects.exists()
