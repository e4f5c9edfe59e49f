"""The API gives the pages' figures under the pages' permissions."""

from __future__ import annotations

import pytest

from tests.profiles.conftest import RULE


def get(client, user, url, **params):
    if user is not None:
        client.force_login(user)
    return client.get(url, params)


def test_the_list_for_an_adjudicator_holds_every_annotators_headline(client, team, adjudicator):
    body = get(client, adjudicator, "/api/profiles/").json()
    assert [r["name"] for r in body["scope"]["rounds"]] == ["B", "P"]
    assert [r["name"] for r in body["scope"]["silver_left_out"]] == ["S"]
    assert body["scope"]["parser"] == "lex" and body["scope"]["round"] is None
    rows = {r["username"]: r for r in body["annotators"]}
    assert set(rows) == {"alice", "bob"}
    alice = rows["alice"]
    assert (alice["submitted"], alice["with_gold"], alice["disagreements"]) == (8, 4, 2)
    assert (alice["overall"]["gold"]["k"], alice["overall"]["gold"]["n"]) == (45, 48)
    assert (alice["overall"]["control"]["k"], alice["control_source"]) == (44, "own")
    assert alice["overall"]["difference"] == pytest.approx(1 / 48)
    assert alice["time"] == {"n": 7, "median_ms": 40000.0, "p90_ms": 70000.0}
    assert alice["url"] == "/profiles/alice/"
    assert rows["bob"]["control_source"] == "team"


def test_an_annotator_gets_only_their_own(client, team, annotator):
    body = get(client, annotator, "/api/profiles/").json()
    assert [r["username"] for r in body["annotators"]] == ["alice"]
    assert get(client, annotator, "/api/profiles/alice/").status_code == 200
    assert get(client, annotator, "/api/profiles/bob/").status_code == 404


def test_no_role_and_no_login_get_nothing(client, team, outsider):
    assert get(client, None, "/api/profiles/").status_code == 401  # a token scheme comes first
    assert get(client, outsider, "/api/profiles/").status_code == 403
    assert get(client, outsider, "/api/profiles/alice/").status_code == 403


def test_a_profile_holds_every_figure_and_a_page_of_the_digest(client, team, adjudicator):
    body = get(client, adjudicator, "/api/profiles/alice/").json()
    agency = next(s for s in body["slots"] if s["slot"] == "agency")
    assert {k: agency["gold"][k] for k in ("k", "n", "value")} == {"k": 3, "n": 4, "value": 0.75}
    assert agency["gold"]["low"] == pytest.approx(0.1941, abs=1e-4)
    assert (agency["kept"]["k"], agency["control"]["k"], agency["overturned"]["n"]) == (2, 3, 2)
    assert agency["difference"] == pytest.approx(-0.25)
    assert body["overall"]["slot"] == ""
    assert body["flows"][0] == {
        "slot": "agency", "annotator_value": "someone-else", "gold_value": "i", "count": 1,
        "share_of_annotator_value": 0.5,
    }  # fmt: skip
    assert body["throughput"] == [
        {"start": "2026-03-02", "days": 1, "items": 2},
        {"start": "2026-03-03", "days": 1, "items": 0},
        {"start": "2026-03-04", "days": 1, "items": 6},
    ]
    digest = body["digest"]
    assert (digest["total"], digest["page"], digest["pages"]) == (2, 1, 1)
    first = digest["entries"][0]
    assert first["source_id"] == "t4-0" and first["round_name"] == "P"
    agency = first["slots"][0]
    assert (agency["theirs"], agency["gold"], agency["source"]) == ("someone-else", "i", "convention")
    assert agency["convention"] == {
        "id": team["convention"].pk,
        "label": "C1 v1",
        "rule": RULE,
        "chosen": "i",
    }
    assert first["slots"][1]["why"] == "a plain reading" and first["slots"][1]["who"] == "carol"


def test_one_round_and_bad_queries(client, team, adjudicator):
    body = get(client, adjudicator, "/api/profiles/alice/", round=team["P"].pk).json()
    assert body["submitted"] == 4 and body["scope"]["round"]["name"] == "P"
    assert body["control_source"] == "" and body["overall"]["difference"] is None
    refused = get(client, adjudicator, "/api/profiles/alice/", round="nope")
    assert refused.status_code == 400 and refused.json()["round"][0].startswith("there is no round 'nope'")
    silver = get(client, adjudicator, "/api/profiles/", round=team["S"].pk)
    assert silver.status_code == 400 and "silver pass" in silver.json()["detail"]
    past = get(client, adjudicator, "/api/profiles/alice/", page=5)
    assert past.status_code == 400
    assert past.json() == {
        "detail": "page: there is no page 5; pages 1 to 1",
        "page": ["there is no page 5; pages 1 to 1"],
    }
