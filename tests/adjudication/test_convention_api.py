"""Conventions through the API: each operation as an adjudicator (the database checked), with bad
input (400 by field, nothing written) and conflicting (409, nothing written); every answer checked
strictly against the OpenAPI schema (tests/adjudication/api_checks.py)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from django.urls import reverse

from adjudication.gold.services import convention_apply, convention_propose, gold_sync
from adjudication.models import Convention, GoldChange, GoldConstrual, GoldItem, Vote
from tests.adjudication.api_checks import PROPOSAL, conforms, golds, written


def test_the_strict_check_can_fail(openapi, api, adjudicator, accepted):
    """An undeclared key, or a null where none is declared, fails the check."""
    api.force_login(adjudicator)
    response = api.get(reverse("api_convention", args=[accepted.pk]))
    conforms(openapi, response)
    original = response.json()
    for broken in ({**original, "extra": 1}, {**original, "label": None}):
        response.json = lambda broken=broken: broken
        with pytest.raises(jsonschema.ValidationError):
            conforms(openapi, response)


# Conventions -----------------------------------------------------------------------------------------


def test_an_adjudicator_proposes_a_convention(openapi, api, adjudicator, submitted):
    api.force_login(adjudicator)
    body = {**PROPOSAL, "round": submitted.pk, "from": "conflict", "item": "t3-0"}
    response = api.post(reverse("api_conventions"), body, format="json")
    assert response.status_code == 201
    out = conforms(openapi, response)
    convention = Convention.objects.get()
    assert out["id"] == convention.pk and out["label"] == "C1 v1" and out["status"] == "proposed"
    assert (convention.slot, convention.value_a, convention.value_b, convention.chosen) == (
        "intensity", "plain", "very", "plain",
    )  # fmt: skip
    assert convention.proposer == adjudicator and convention.round == submitted
    assert convention.source == {"from": "conflict", "item": "t3-0"}
    assert out["votes"] == [] and out["acceptance"] == {"quorum": 2, "majority": 0.5}


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"value_a": "loud"}, "value_a", "loud is not a value of intensity; allowed: very, plain, small"),
        ({"chosen": "small"}, "chosen", "the chosen value must be plain or very"),
        ({"value_b": "plain"}, "value_b", "a convention settles a dispute between two different values"),
        ({"rule": "   "}, "rule", "write the convention in words"),
        ({"slot": "mood"}, "slot", '"mood" is not a valid choice.'),
        ({"round": 999999}, "round", "object does not exist"),
        ({"round": "1"}, "round", "Incorrect type"),
        ({"rule": 12}, "rule", "Not a valid string."),
        ({"from": "nowhere"}, "from", "not a valid choice"),
        ({"rule": None}, "rule", "may not be null"),
        ({"rule": "\ud800"}, "rule", "lone surrogate"),
    ],
)
def test_a_bad_proposal_is_a_400_naming_the_field_and_writes_nothing(
    openapi, api, adjudicator, submitted, change, field, message
):
    api.force_login(adjudicator)
    before = written()
    body = json.dumps({**PROPOSAL, "round": submitted.pk, **change})  # ASCII: a lone surrogate escaped
    response = api.post(reverse("api_conventions"), body, content_type="application/json")
    assert response.status_code == 400
    errors = conforms(openapi, response)
    assert message in " ".join(errors[field])
    assert written() == before


def test_a_missing_field_and_a_body_that_is_not_an_object_are_400s(openapi, api, adjudicator, submitted):
    api.force_login(adjudicator)
    response = api.post(reverse("api_conventions"), {"round": submitted.pk}, format="json")
    assert response.status_code == 400
    assert set(conforms(openapi, response)) == {"slot", "value_a", "value_b", "chosen", "rule"}
    response = api.post(reverse("api_conventions"), [1, 2], format="json")
    assert response.status_code == 400 and "non_field_errors" in conforms(openapi, response)
    response = api.post(reverse("api_conventions"), "{not json", content_type="application/json")
    assert response.status_code == 400 and "JSON parse error" in conforms(openapi, response)["detail"]
    assert not Convention.objects.exists()


def test_a_dispute_a_live_convention_covers_is_a_409(openapi, api, adjudicator, accepted):
    api.force_login(adjudicator)
    before = written()
    body = {"round": accepted.round_id, "slot": "agency", "value_a": "i", "value_b": "someone-else",
            "chosen": "someone-else", "rule": "the other way round"}  # fmt: skip
    response = api.post(reverse("api_conventions"), body, format="json")
    assert response.status_code == 409
    assert (
        "C1 v1 already covers agency i / someone-else (accepted): revise it"
        in conforms(openapi, response)["detail"]
    )
    assert written() == before


def test_the_list_filters_by_round_status_and_slot(openapi, api, adjudicator, accepted, blind_round):
    other = convention_propose(user=adjudicator, round_=blind_round, **PROPOSAL)
    api.force_login(adjudicator)
    url = reverse("api_conventions")

    def ids(**params: Any) -> list[int]:
        response = api.get(url, params)
        assert response.status_code == 200
        body = conforms(openapi, response)
        assert body["count"] == len(body["results"])
        return [c["id"] for c in body["results"]]

    assert sorted(ids()) == sorted([accepted.pk, other.pk])
    assert ids(round=blind_round.pk) == [other.pk]
    assert ids(status="accepted") == [accepted.pk]
    assert ids(slot="intensity") == [other.pk]
    assert ids(slot="agency", status="proposed") == []
    listed = api.get(url, {"status": "accepted"}).json()["results"][0]
    assert [v["adjudicator"] for v in listed["votes"]] == ["carol", "dave"]
    assert ids(round=999999) == []  # no such round: none of its conventions
    for bad in ({"status": "maybe"}, {"slot": "mood"}, {"round": "x"}, {"round": "1.5"}, {"round": 2**63}):
        response = api.get(url, bad)
        assert response.status_code == 400, bad
        assert set(conforms(openapi, response)) == set(bad)
    response = api.get(url, {"page": 9})
    assert response.status_code == 404 and conforms(openapi, response)["detail"] == "Invalid page."


def test_the_detail_has_votes_and_previews_what_it_would_change(
    openapi, api, adjudicator, admin_user, accepted
):
    round_ = accepted.round
    api.force_login(admin_user)  # admins read
    url = reverse("api_convention", args=[accepted.pk])
    response = api.get(url)
    assert response.status_code == 200
    body = conforms(openapi, response)
    # no gold record is open yet: none matches, four wait (and the GET opened none)
    assert body["preview"]["count"] == 0 and body["preview"]["awaiting"] == 4
    assert not GoldItem.objects.exists()
    assert [(v["adjudicator"], v["approve"]) for v in body["votes"]] == [("carol", True), ("dave", True)]
    assert body["versions"] == [{"id": accepted.pk, "version": 1, "status": "accepted"}]

    gold_sync(round_)
    body = conforms(openapi, api.get(url))
    preview = body["preview"]
    assert preview["count"] == 2 and preview["more"] == 0 and preview["awaiting"] == 0
    assert preview["coders"] == ["alice", "bob"]
    assert [(m["source_id"], m["values"]) for m in preview["matches"]] == [
        ("t1-0", ["i", "someone-else"]),
        ("t2-0", ["i", "someone-else"]),
    ]
    by_source = golds(round_)
    assert [m["gold_id"] for m in preview["matches"]] == [by_source["t1-0"].pk, by_source["t2-0"].pk]
    assert preview["matches"][0]["text"]

    convention_apply(user=adjudicator, convention=accepted)
    assert conforms(openapi, api.get(url))["preview"]["count"] == 0  # nothing left to settle


def test_votes_are_recorded_and_decide_the_convention(
    openapi, api, adjudicator, other_adjudicator, submitted
):
    convention = convention_propose(user=adjudicator, round_=submitted, **PROPOSAL)
    url = reverse("api_convention_vote", args=[convention.pk])
    api.force_login(adjudicator)
    response = api.post(url, {"approve": True, "comment": " agreed "}, format="json")
    assert response.status_code == 200 and conforms(openapi, response)["status"] == "proposed"
    vote = Vote.objects.get()
    assert (vote.adjudicator, vote.approve, vote.comment) == (adjudicator, True, "agreed")

    again = api.post(url, {"approve": False}, format="json")
    assert again.status_code == 409
    assert conforms(openapi, again)["detail"] == "carol has already voted on C1 v1"
    assert Vote.objects.count() == 1

    api.force_login(other_adjudicator)
    response = api.post(url, {"approve": True}, format="json")
    body = conforms(openapi, response)
    assert body["status"] == "accepted" and body["decided_at"] is not None
    convention.refresh_from_db()
    assert convention.status == "accepted"


@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "approve"), ({"approve": "yes"}, "approve"), ({"approve": 1}, "approve"),
     ({"approve": True, "comment": 5}, "comment"), ({"approve": True, "comment": "x" * 2001}, "comment")],
)  # fmt: skip
def test_a_bad_vote_is_a_400_and_writes_nothing(openapi, api, adjudicator, submitted, body, field):
    convention = convention_propose(user=adjudicator, round_=submitted, **PROPOSAL)
    api.force_login(adjudicator)
    response = api.post(reverse("api_convention_vote", args=[convention.pk]), body, format="json")
    assert response.status_code == 400 and field in conforms(openapi, response)
    assert not Vote.objects.exists()


def test_a_vote_on_a_decided_convention_is_a_409(openapi, api, adjudicator, accepted):
    api.force_login(adjudicator)
    before = written()
    response = api.post(reverse("api_convention_vote", args=[accepted.pk]), {"approve": False}, format="json")
    assert response.status_code == 409
    assert "only a proposed convention takes votes" in conforms(openapi, response)["detail"]
    assert written() == before


def test_apply_settles_the_matching_gold_and_only_once_accepted(
    openapi, api, adjudicator, accepted, submitted
):
    api.force_login(adjudicator)
    gold_sync(submitted)
    proposed = convention_propose(user=adjudicator, round_=submitted, **PROPOSAL)
    before = written()
    refused = api.post(reverse("api_convention_apply", args=[proposed.pk]))
    assert refused.status_code == 409
    assert "only an accepted convention is applied" in conforms(openapi, refused)["detail"]
    assert written() == before

    response = api.post(reverse("api_convention_apply", args=[accepted.pk]))
    assert response.status_code == 200
    body = conforms(openapi, response)
    assert body["changed"] == 2 and body["convention"]["applied_at"] is not None
    for source_id in ("t1-0", "t2-0"):
        first = GoldConstrual.objects.get(gold__item__source_id=source_id, index=1)
        assert first.slots["agency"] == "i"
        assert first.provenance["agency"] == {
            "source": "convention",
            "convention": 1,
            "version": 1,
            "by": "carol",
        }
    assert GoldChange.objects.filter(why__startswith="convention C1 v1").count() == 2


def test_withdraw_is_the_proposers_and_only_while_proposed(
    openapi, api, adjudicator, other_adjudicator, accepted, submitted
):
    proposed = convention_propose(user=adjudicator, round_=submitted, **PROPOSAL)
    url = reverse("api_convention_withdraw", args=[proposed.pk])
    api.force_login(other_adjudicator)
    response = api.post(url)
    assert response.status_code == 403
    assert conforms(openapi, response)["detail"] == "only the proposer can withdraw a convention"
    proposed.refresh_from_db()
    assert proposed.status == "proposed"

    api.force_login(adjudicator)
    response = api.post(url)
    assert response.status_code == 200 and conforms(openapi, response)["status"] == "withdrawn"
    proposed.refresh_from_db()
    assert proposed.status == "withdrawn" and proposed.decided_at is not None

    response = api.post(reverse("api_convention_withdraw", args=[accepted.pk]))
    assert response.status_code == 409 and "only a proposed one" in conforms(openapi, response)["detail"]
    accepted.refresh_from_db()
    assert accepted.status == "accepted"


def test_revise_proposes_a_new_version_and_marks_its_gold_for_review(
    openapi, api, adjudicator, accepted, submitted
):
    gold_sync(submitted)
    convention_apply(user=adjudicator, convention=accepted)
    api.force_login(adjudicator)
    url = reverse("api_convention_revise", args=[accepted.pk])
    response = api.post(url, {"chosen": "someone-else", "rule": "The other reading wins."}, format="json")
    assert response.status_code == 201
    body = conforms(openapi, response)
    revision = Convention.objects.get(number=1, version=2)
    assert body["id"] == revision.pk and body["status"] == "proposed" and revision.chosen == "someone-else"
    assert [v["version"] for v in body["versions"]] == [2, 1]
    flagged = set(GoldItem.objects.filter(needs_review=True).values_list("item__source_id", flat=True))
    assert flagged == {"t1-0", "t2-0"}

    again = api.post(url, {"chosen": "i", "rule": "back again"}, format="json")
    assert again.status_code == 409
    assert conforms(openapi, again)["detail"] == "a revision of C1 is already proposed"
    assert Convention.objects.filter(number=1).count() == 2


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"chosen": "no-one", "rule": "x"}, "chosen", "no-one is not one of the disputed values"),
        ({"chosen": "i", "rule": " "}, "rule", "write the revised convention in words"),
        ({"chosen": "i"}, "rule", "write the revised convention in words"),
    ],
)
def test_a_bad_revision_is_a_400_and_writes_nothing(
    openapi, api, adjudicator, accepted, body, field, message
):
    api.force_login(adjudicator)
    before = written()
    response = api.post(reverse("api_convention_revise", args=[accepted.pk]), body, format="json")
    assert response.status_code == 400
    assert message in " ".join(conforms(openapi, response)[field])
    assert written() == before


def test_a_revision_of_a_proposed_convention_is_a_409(openapi, api, adjudicator, submitted):
    proposed = convention_propose(user=adjudicator, round_=submitted, **PROPOSAL)
    api.force_login(adjudicator)
    response = api.post(
        reverse("api_convention_revise", args=[proposed.pk]), {"chosen": "very", "rule": "r"}, format="json"
    )
    assert (
        response.status_code == 409 and "only the accepted version" in conforms(openapi, response)["detail"]
    )
    assert Convention.objects.count() == 1
