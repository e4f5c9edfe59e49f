"""Minimal pairs through the API: each answer's status and what the database holds after it."""

from __future__ import annotations

import json

import pytest
from drf_spectacular.generators import SchemaGenerator

from contrasts.models import MinimalPair, PairSet
from contrasts.services import pair_set_freeze

pytestmark = pytest.mark.django_db


def post(client, url: str, body=None):
    return client.post(url, json.dumps(body) if body is not None else "", content_type="application/json")


def pair_body(source, **change) -> dict:
    return {
        "item": source.pk,
        "text": "I was happy when my sister won the chess final.",
        "targets": {"agency": "someone-else"},
        "expected": "joy",
        **change,
    }


@pytest.fixture
def t1(gold_round):
    return gold_round.item_set.items.get(source_id="t1-0")


def test_an_adjudicator_creates_a_set_and_lists_it(client, adjudicator):
    client.force_login(adjudicator)
    made = post(client, "/api/contrasts/", {"name": "agency", "note": "flips of agency"})
    assert made.status_code == 201, made.json()
    assert made.json() | {"created_at": None} == {
        "id": made.json()["id"], "name": "agency", "version": 1, "spec": "agency@v1", "open": True,
        "pairs": 0, "note": "flips of agency", "created_by": "carol", "created_at": None, "frozen_at": None,
        "frozen_by": None,
    }  # fmt: skip
    assert PairSet.objects.get().created_by == adjudicator
    assert [s["spec"] for s in client.get("/api/contrasts/").json()] == ["agency@v1"]
    again = post(client, "/api/contrasts/", {"name": "agency"})
    assert again.status_code == 409 and "exists" in again.json()["detail"]
    assert PairSet.objects.count() == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({"name": "Not A Name"}, "name"),
        ({"name": 12}, "name"),
        ({"name": "ok", "colour": "red"}, "colour"),
        ({"name": "ok", "note": 3}, "note"),
        ({}, "name"),
    ],
)
def test_a_bad_set_is_a_400_naming_the_field(client, adjudicator, body, field):
    client.force_login(adjudicator)
    refused = post(client, "/api/contrasts/", body)
    assert refused.status_code == 400 and field in refused.json(), refused.json()
    assert not PairSet.objects.exists()


def test_a_pair_is_added_and_read_back(client, adjudicator, t1):
    client.force_login(adjudicator)
    set_id = post(client, "/api/contrasts/", {"name": "agency"}).json()["id"]
    added = post(client, f"/api/contrasts/{set_id}/pairs/", pair_body(t1, family="F1"))
    assert added.status_code == 201, added.json()
    doc = added.json()
    assert (doc["targets"], doc["expected"], doc["family"], doc["source_id"]) == (
        {"agency": ["i", "someone-else"]}, "joy", "F1", "t1-0",
    )  # fmt: skip
    assert doc["item_text"] == t1.text and doc["reference_label"] == "pride"
    pair = MinimalPair.objects.get()
    assert (pair.pair_set_id, pair.item_id, pair.created_by) == (set_id, t1.pk, adjudicator)
    invariant = post(
        client, f"/api/contrasts/{set_id}/pairs/",
        {"item": t1.pk, "text": "I felt proud when I won the chess final.", "invariance": True},
    )  # fmt: skip
    assert invariant.status_code == 201 and invariant.json()["expected"] == "pride"
    assert invariant.json()["family"] == "invariance" and invariant.json()["targets"] == {}
    listed = client.get(f"/api/contrasts/{set_id}/pairs/").json()
    assert [p["id"] for p in listed] == list(MinimalPair.objects.order_by("id").values_list("pk", flat=True))
    detail = client.get(f"/api/contrasts/{set_id}/").json()
    assert detail["pairs"] == 2 and len(detail["pair_list"]) == 2


@pytest.mark.parametrize(
    "change, where",
    [
        ({"targets": {"agency": "everyone"}}, ("targets", "agency")),
        ({"targets": {"agency": "i"}}, ("targets", "agency")),
        ({"targets": {"mood": "low"}}, ("targets", "mood")),
        ({"expected": "elation"}, ("expected",)),
        ({"text": ""}, ("text",)),
        ({"text": "a\u0000b"}, ("text",)),
        ({"item": "t1-0"}, ("item",)),
        ({"item": 999999}, ("item",)),
        ({"invariance": "yes"}, ("invariance",)),
        ({"invariance": True}, ("targets",)),
        ({"from": {"agency": "none"}}, ("from", "agency")),
        ({"colour": "red"}, ("colour",)),
    ],
)
def test_a_bad_pair_is_a_400_naming_the_field_and_writes_nothing(client, adjudicator, t1, change, where):
    client.force_login(adjudicator)
    set_id = post(client, "/api/contrasts/", {"name": "agency"}).json()["id"]
    refused = post(client, f"/api/contrasts/{set_id}/pairs/", pair_body(t1, **change))
    assert refused.status_code == 400
    found = refused.json()
    for key in where:
        assert key in found, found
        found = found[key]
    assert not MinimalPair.objects.exists()


def test_freeze_new_version_and_a_frozen_set_refusing_a_pair(client, admin_user, t1):
    client.force_login(admin_user)  # admins write as adjudicators do
    set_id = post(client, "/api/contrasts/", {"name": "agency"}).json()["id"]
    assert post(client, f"/api/contrasts/{set_id}/freeze/").status_code == 409  # no pairs yet
    assert post(client, f"/api/contrasts/{set_id}/pairs/", pair_body(t1)).status_code == 201
    assert post(client, f"/api/contrasts/{set_id}/new-version/").status_code == 409  # open
    frozen = post(client, f"/api/contrasts/{set_id}/freeze/")
    assert (
        frozen.status_code == 200 and frozen.json()["open"] is False and frozen.json()["frozen_by"] == "dana"
    )
    assert post(client, f"/api/contrasts/{set_id}/freeze/").status_code == 409
    refused = post(client, f"/api/contrasts/{set_id}/pairs/", pair_body(t1, text="I was glad my sister won."))
    assert refused.status_code == 409 and "frozen" in refused.json()["detail"]
    assert MinimalPair.objects.count() == 1
    second = post(client, f"/api/contrasts/{set_id}/new-version/")
    assert second.status_code == 201 and (second.json()["version"], second.json()["pairs"]) == (2, 1)
    assert PairSet.objects.get(pk=second.json()["id"]).pairs.count() == 1
    assert post(client, f"/api/contrasts/{set_id}/new-version/").status_code == 409  # v2 is newer


def test_scores_for_every_parser_or_one(client, adjudicator, pair_set, tiny_parser):
    client.force_login(adjudicator)
    url = f"/api/contrasts/{pair_set.pk}/scores/"
    doc = client.get(url).json()
    assert doc["set"] == "pilot-pairs@v1" and len(doc["rule_set_hash"]) == 64
    assert [p["parser"] for p in doc["parsers"]] == ["lexical", "tiny@1"]
    lexical = doc["parsers"][0]
    assert lexical["scored"] and lexical["report"]["overall"]["n"] == 3
    assert {f["family"] for f in lexical["report"]["families"]} == {"F-agency", "F-intensity", "invariance"}
    assert set(lexical["report"]["overall"]["slot"]) == {"k", "n", "value", "ci"}
    one = client.get(url, {"parser": "tiny"}).json()
    assert [p["parser"] for p in one["parsers"]] == ["tiny@1"]
    missing = client.get(url, {"parser": "nope"})
    assert missing.status_code == 404 and "lexical, tiny@1" in missing.json()["detail"]
    assert client.get("/api/contrasts/999999/scores/").status_code == 404


def test_annotators_and_strangers_are_refused(client, annotator, pair_set):
    assert client.get("/api/contrasts/").status_code == 401
    client.force_login(annotator)
    for url in ("/api/contrasts/", f"/api/contrasts/{pair_set.pk}/scores/"):
        refused = client.get(url)
        assert refused.status_code == 403 and "adjudicators and admins" in refused.json()["detail"]
    assert post(client, "/api/contrasts/", {"name": "mine"}).status_code == 403
    assert post(client, f"/api/contrasts/{pair_set.pk}/freeze/").status_code == 403
    assert PairSet.objects.count() == 1 and pair_set.is_open


def test_a_frozen_set_is_read_as_it_was(client, adjudicator, pair_set):
    pair_set_freeze(user=adjudicator, pair_set=pair_set)
    client.force_login(adjudicator)
    assert client.get(f"/api/contrasts/{pair_set.pk}/").json()["open"] is False


def test_the_schema_documents_the_bodies_and_the_conflicts(settings):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]
    assert {"/api/contrasts/", "/api/contrasts/{set_id}/pairs/", "/api/contrasts/{set_id}/scores/"} <= set(
        paths
    )
    add = paths["/api/contrasts/{set_id}/pairs/"]["post"]
    assert {"201", "400", "403", "404", "409"} <= set(add["responses"])
    body = schema["components"]["schemas"]["PairIn"]
    assert body["additionalProperties"] is False and body["required"] == ["item", "text"]
    assert body["properties"]["targets"]["properties"]["agency"]["enum"] == [
        "i",
        "someone-else",
        "no-one",
        "none",
    ]
    assert "from" in body["properties"] and "from_" not in body["properties"]
    assert schema["components"]["schemas"]["PairSetIn"]["additionalProperties"] is False
