"""The whole flow through the client against a live server, each role with its own token: an admin
imports a file and makes a round over it, the annotators take their assignments and submit them,
the adjudicator reads the agreement and opens the gold, the admin exports it with a job, waits for
it and downloads the archive."""

from __future__ import annotations

import hashlib
import json
import zipfile

import pytest

from adjudication.models import GoldItem
from annotator.models import Annotation, Assignment, Item, ItemSet, Round
from exports.models import Export
from nsmclient import Client
from tests.factories import PRED, TEXTS

pytestmark = pytest.mark.django_db(transaction=True)


def jsonl(n: int) -> bytes:
    rows = []
    for i in range(n):
        sid, emotion, text, masked = TEXTS[i % len(TEXTS)]
        rows.append({"text_id": f"{sid}-{i}", "emotion": emotion, "text": text, "masked_text": masked})
    return "\n".join(json.dumps(row) for row in rows).encode()


def test_import_round_annotate_agree_export_and_download(
    api, tmp_path, admin_user, annotator, other_annotator, adjudicator
):
    admin = api(admin_user)
    corpus = tmp_path / "batch.jsonl"
    corpus.write_bytes(jsonl(6))

    imported = admin.import_items(file=corpus, item_set="batch-1", tier="P")
    assert (imported["rows"], imported["created"], imported["round"]) == (6, 6, None)
    item_set = ItemSet.objects.get(name="batch-1")
    assert imported["item_set"]["id"] == item_set.pk and item_set.size == 6
    assert set(Item.objects.filter(source="batch").values_list("source_id", flat=True)) == {
        f"{TEXTS[i % 4][0]}-{i}" for i in range(6)
    }

    made = admin.create_round(name="H1", item_set=item_set.pk, annotators=["alice", "bob"], text_field="text")
    round_ = Round.objects.get(name="H1")
    assert made["id"] == round_.pk and made["mode"] == "blind"
    assert Assignment.objects.filter(round=round_).count() == 12  # 6 items, 2 annotators each

    for user in (annotator, other_annotator):
        mine = api(user)
        seen = []
        while (assignment := mine.next_assignment(round="H1")) is not None:
            assert assignment["text"] and "label" not in assignment  # never the reference label
            saved = mine.submit_annotation(assignment, {**PRED, "time_spent_ms": 1500})
            assert saved["version"] == 1
            seen.append(assignment["id"])
        assert sorted(seen) == sorted(
            Assignment.objects.filter(round=round_, annotator=user).values_list("pk", flat=True)
        )
    assert Annotation.objects.filter(assignment__round=round_).count() == 12
    assert not Assignment.objects.filter(round=round_, status="pending").exists()

    judge = api(adjudicator)
    agreement = judge.rounds_agreement_retrieve(round_.pk)
    assert {row["slot"] for row in agreement["slots"]} == set(PRED)
    assert all(row["raw"] == 1.0 and row["items"] == 6 for row in agreement["slots"])  # all agree
    judge.rounds_gold_open_create(round_.pk)
    gold = list(judge.paginate(judge.rounds_gold_list, round_.pk))
    assert len(gold) == 6 and {g["status"] for g in gold} == {"resolved"}  # unanimous
    assert GoldItem.objects.filter(round=round_, status="resolved").count() == 6

    states: list[dict] = []
    job = admin.start_job(admin.jobs_export_create, {"round": round_.pk, "verify": False})
    finished = admin.wait_for_job(job, progress=states.append, interval=0.05)
    assert finished["status"] == "done" and finished["id"] == job["id"]
    assert states[-1] == finished and all(s["id"] == job["id"] for s in states)
    archive = admin.download_export(finished, tmp_path)

    export = Export.objects.get(job_id=job["id"])
    assert archive == tmp_path / export.filename
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == export.sha256
    with zipfile.ZipFile(archive) as zipped:
        records = zipped.read("emoexpl.jsonl").decode().splitlines()
    assert len(records) == export.records == 6
    assert not list(tmp_path.glob(".*.partial"))  # written whole

    listed = list(admin.paginate(admin.exports_list, round=round_.pk))
    assert [e["id"] for e in listed] == [export.pk]
    by_id = admin.download_export(export.pk, tmp_path / "again.zip")
    assert by_id.read_bytes() == archive.read_bytes()


def test_login_with_a_password_gets_a_token_that_replaces_the_old_one(api, live_server, admin_user):
    old = api(admin_user)
    assert old.token_retrieve()["exists"] is True
    with Client.login(live_server.url, "dana", "dana-pw") as fresh:
        assert fresh.token and fresh.token != old.token
        assert fresh.rounds_list()["count"] == 0
    from nsmclient import Unauthorized

    with pytest.raises(Unauthorized):
        old.rounds_list()  # rotated
    with pytest.raises(Unauthorized) as refused:
        Client.login(live_server.url, "dana", "wrong")
    assert refused.value.response.headers["WWW-Authenticate"].startswith("Basic")


def test_a_file_given_as_a_name_and_bytes_and_a_round_in_the_same_request(
    api, admin_user, annotator, other_annotator
):
    imported = api(admin_user).import_items(
        file=("rows.jsonl", jsonl(4)), item_set="s", round="r", annotators=["alice", str(other_annotator.pk)]
    )
    assert imported["source"] == "rows" and imported["assignments"] == 8
    assert Round.objects.get(name="r").pool.count() == 2


def test_an_annotator_reads_only_their_own_work_and_a_stale_save_is_a_conflict(
    api, prefilled_round, annotator, other_annotator
):
    from nsmclient import Conflict, NotFound

    alice = api(annotator)
    mine = list(alice.paginate(alice.assignments_list, round=prefilled_round.name))
    assert {a["id"] for a in mine} == set(
        Assignment.objects.filter(round=prefilled_round, annotator=annotator).values_list("pk", flat=True)
    )
    theirs = Assignment.objects.filter(round=prefilled_round, annotator=other_annotator).first()
    with pytest.raises(NotFound):
        alice.assignments_retrieve(theirs.pk)
    first = mine[0]
    alice.submit_annotation(first["id"], PRED)  # version read from the server: 0
    with pytest.raises(Conflict) as stale:
        alice.submit_annotation(first, PRED)  # the listing's version, now stale
    assert stale.value.status == 409 and stale.value.errors == {"current_version": 1}
    assert "saved elsewhere" in stale.value.detail
    assert Annotation.objects.get(assignment_id=first["id"]).version == 1
