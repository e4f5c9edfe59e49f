"""Issue 24: the schema says what the views accept (the fuzzer's strict checks, ST201/ST202, in
tests/integration/test_api_fuzz.py): each mismatch it found, pinned here on the schema and on the
view together."""

from __future__ import annotations

import json

import pytest

from adjudication.rule_revisions.services import revision_propose
from jobs.kinds import kinds
from rules.models import RuleSetVersion
from tests.app.test_schema import generated, operations
from tests.rules.data import moved

pytestmark = pytest.mark.django_db


def parameter(path: str, method: str, name: str) -> dict:
    return next(p for p in generated()["paths"][path][method]["parameters"] if p["name"] == name)


def test_request_bodies_are_documented_as_json_and_an_upload_as_multipart_with_a_binary_file():
    schema = generated()
    media = {
        (method, route): list(op["requestBody"]["content"])
        for method, route, op in operations(schema)
        if "requestBody" in op
    }
    assert media.pop(("POST", "/api/imports/")) == ["multipart/form-data"]
    assert media.pop(("POST", "/api/exports/replay/")) == ["multipart/form-data"]  # an archive
    assert media and set(map(tuple, media.values())) == {("application/json",)}
    upload = schema["components"]["schemas"]["ImportIn"]["properties"]["file"]
    assert upload["format"] == "binary"
    # a name that may not be blank says so (COMPONENT_SPLIT_REQUEST), under its usual name
    assert schema["components"]["schemas"]["ItemSetIn"]["properties"]["name"]["minLength"] == 1


def test_pages_are_numbered_from_1_and_an_empty_page_is_refused(client, admin_user, items):
    assert parameter("/api/items/", "get", "page")["schema"] == {"type": "integer", "minimum": 1}
    assert parameter("/api/rounds/{round_id}/conflicts/", "get", "page")["schema"]["minimum"] == 1
    client.force_login(admin_user)
    assert client.get("/api/items/", {"page": ""}).status_code == 404  # DRF read it as page 1
    assert client.get("/api/items/", {"page": "1"}).json()["count"] == len(items)


def test_the_job_kind_filter_lists_the_registered_kinds(client, admin_user):
    assert parameter("/api/jobs/", "get", "kind")["schema"]["enum"] == ["", *sorted(kinds())]  # "": any
    client.force_login(admin_user)
    refused = client.get("/api/jobs/", {"kind": "lora"})
    assert refused.status_code == 400 and "kind" in refused.json()


def test_the_evaluations_numbers_have_their_bounds_in_the_schema():
    bounds = {
        name: parameter("/api/rounds/{round_id}/evaluation/", "get", name)["schema"]
        for name in ("decay", "orders", "seed")
    }
    assert bounds["decay"] == {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1}
    assert (bounds["orders"]["minimum"], bounds["orders"]["maximum"]) == (0, 5000)
    assert (bounds["seed"]["minimum"], bounds["seed"]["maximum"]) == (0, 2**32 - 1)


def test_flows_read_an_empty_pass_as_one_not_given(client, adjudicator, submitted):
    client.force_login(adjudicator)
    url = f"/api/rounds/{submitted.pk}/flows/"
    assert client.get(url, {"a": "", "b": ""}).json() == client.get(url).json()


def post_proposal(client, version: str, document: dict):
    body = {"document": document, "version": version}
    return client.post("/api/rule-sets/", json.dumps(body), content_type="application/json")


def test_a_version_name_is_ascii_as_its_pattern_says(client, adjudicator):
    version = generated()["components"]["schemas"]["ProposeIn"]["properties"]["version"]
    # a name of its pattern, or empty (the next number): the two cases apart, as oneOf needs
    case = version["oneOf"][0]
    assert [case.get("pattern"), case.get("maxLength")] == ["^[A-Za-z0-9._-]{1,32}$", 32]
    assert version["oneOf"][1] == {"type": "string", "maxLength": 0}
    client.force_login(adjudicator)
    for name in ("¼", "2 1", " 2"):
        refused = post_proposal(client, name, moved("no-emotion", 1))
        assert refused.status_code == 400 and "version" in refused.json(), name
    assert RuleSetVersion.objects.count() == 1  # the initial version only
    assert post_proposal(client, "2.a_b-c", moved("no-emotion", 1)).status_code == 201


def test_a_proposal_already_stored_is_a_conflict(client, adjudicator):
    revision_propose(user=adjudicator, document=moved("no-emotion", 1), version="2")
    client.force_login(adjudicator)
    same_name = post_proposal(client, "2", moved("no-emotion", 2))
    assert same_name.status_code == 409 and "already exists" in same_name.json()["detail"]
    same_rules = post_proposal(client, "3", moved("no-emotion", 1))
    assert same_rules.status_code == 409 and "identical to v2" in same_rules.json()["detail"]
    assert sorted(RuleSetVersion.objects.values_list("version", flat=True)) == ["1", "2"]
    assert "409" in generated()["paths"]["/api/rule-sets/"]["post"]["responses"]


def test_a_json_boolean_is_true_or_false_and_a_forms_is_still_read(client, admin_user, gold_round, settings):
    from jobs.models import Job

    settings.NSM_EXPORT_DIR = settings.NSM_TEST_RUN_DIR / "exports"
    client.force_login(admin_user)
    for drawn in (0, 1, "true", None):
        body = json.dumps({"verify": drawn, "round": gold_round.pk})
        refused = client.post("/api/jobs/export/", body, content_type="application/json")
        assert refused.status_code == 400 and "verify" in refused.json(), drawn
    assert not Job.objects.exists()
    form = client.post("/api/jobs/export/", {"verify": "false", "round": gold_round.pk})
    assert form.status_code == 201 and Job.objects.get().params["verify"] is False


def test_a_vote_the_version_no_longer_takes_is_a_conflict(client, adjudicator, other_adjudicator):
    revision_propose(user=adjudicator, document=moved("no-emotion", 1), version="2")
    client.force_login(adjudicator)
    vote = {"approve": False}
    assert client.post("/api/rule-sets/2/vote/", vote, content_type="application/json").status_code == 200
    again = client.post("/api/rule-sets/2/vote/", vote, content_type="application/json")
    assert again.status_code == 409 and "already voted" in again.json()["detail"]
    active = client.post("/api/rule-sets/1/vote/", vote, content_type="application/json")
    assert active.status_code == 409 and "only a proposed version takes votes" in active.json()["detail"]
    assert RuleSetVersion.objects.get(version="2").votes.count() == 1
    assert "409" in generated()["paths"]["/api/rule-sets/{version}/vote/"]["post"]["responses"]


def test_the_annotation_body_says_it_takes_no_other_field():
    assert generated()["components"]["schemas"]["AnnotationIn"]["additionalProperties"] is False


def test_agreement_refuses_an_unknown_intensity_level(client, adjudicator, submitted):
    client.force_login(adjudicator)
    url = f"/api/rounds/{submitted.pk}/agreement/"
    for level in ("", "interval"):
        refused = client.get(url, {"intensity": level})
        assert refused.status_code == 400 and "intensity" in refused.json(), level
    assert client.get(url, {"intensity": "ordinal"}).status_code == 200
    assert parameter("/api/rounds/{round_id}/agreement/", "get", "intensity")["schema"]["enum"] == [
        "nominal",
        "ordinal",
    ]


def test_an_empty_conflict_slot_is_any_slot_as_the_schema_says(client, adjudicator, submitted):
    assert parameter("/api/rounds/{round_id}/conflicts/", "get", "slot")["schema"]["enum"][0] == ""
    client.force_login(adjudicator)
    url = f"/api/rounds/{submitted.pk}/conflicts/"
    assert client.get(url, {"slot": ""}).json()["count"] == client.get(url).json()["count"] > 0


def test_a_text_field_says_it_takes_no_nul_character():
    schemas = generated()["components"]["schemas"]
    assert schemas["AnnotationIn"]["properties"]["notes"]["oneOf"][0]["pattern"] == "^[^\\x00]*$"
    assert schemas["ItemSetIn"]["properties"]["name"]["pattern"] == "^[^\\x00]*$"


def test_an_empty_filter_is_no_filter_and_text_filters_take_no_nul(client, admin_user, one_job_of_each_kind):
    round_ = parameter("/api/jobs/", "get", "round")["schema"]
    assert round_ == {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 0}]}
    assert parameter("/api/items/", "get", "source_id")["schema"]["pattern"] == "^[^\\x00]*$"
    client.force_login(admin_user)
    assert client.get("/api/jobs/", {"round": "", "status": ""}).json()["count"] == 3
    refused = client.get("/api/items/", {"source_id": "a\x00b"})
    assert refused.status_code == 400 and "source_id" in refused.json()
