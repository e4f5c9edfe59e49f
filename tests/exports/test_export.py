"""EmoExpl export jobs on a tiny NLI model built here (entailment at index 2): the archive's
records (each validated by the JSON Schema in the docs), manifest and dataset card; the same
bytes from the same database; no file after a crash and a clean re-run; refusals before a job
starts; the page, the downloads (admins only) and the command."""

import hashlib
import io
import json
import re
import zipfile
from pathlib import Path

import jsonschema
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

import nsmcore
from adjudication.models import AgreementSnapshot, GoldItem
from annotator.models import Item
from exports import export as export_module
from exports.export import export_start
from exports.models import Export
from jobs.models import Job
from jobs.services import JobError, job_resume, job_run
from nsmcore.emoexpl import dumps, record_schema
from nsmcore.render import render
from nsmcore.schema import Explication
from nsmcore.tiny import build_tiny_nli
from rules.rulesets import active_rule_set
from tests.explications import PRED
from verification.models import LineVerification

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "emoexpl" / "record.schema.json"


@pytest.fixture(scope="module")
def nli_path(tmp_path_factory):
    return str(
        build_tiny_nli(tmp_path_factory.mktemp("nli"), labels=("neutral", "contradiction", "entailment"))
    )


@pytest.fixture(autouse=True)
def _export_dir(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    settings.NSM_VERIFIER_DEVICE = "cpu"


def export_now(user, **kw) -> Job:
    job = export_start(user=user, enqueue=False, **kw)
    job_run(job.pk)
    job.refresh_from_db()
    return job


def archive(job: Job) -> zipfile.ZipFile:
    return zipfile.ZipFile(Export.objects.get(job=job).path)


def records(zf: zipfile.ZipFile) -> list[dict]:
    return [json.loads(line) for line in zf.read("emoexpl.jsonl").decode().splitlines()]


def test_every_record_holds_the_gold_with_its_verified_lines(gold_round, admin_user, nli_path):
    job = export_now(admin_user, round_=gold_round, model=nli_path)
    assert (job.status, job.done, job.total) == ("done", 4, 4), job.error
    zf = archive(job)
    assert zf.namelist() == ["emoexpl.jsonl", "manifest.json", "README.md", "record.schema.json"]
    schema = json.loads(SCHEMA_FILE.read_text())
    rows = records(zf)
    for text, row in zip(zf.read("emoexpl.jsonl").decode().splitlines(), rows, strict=True):
        jsonschema.validate(row, schema)
        assert text == dumps(row)  # the assembled line is the canonical encoding of its record
    assert [r["source_id"] for r in rows] == ["t1-0", "t2-0", "t3-0", "t4-0"]
    by_id = {r["source_id"]: r for r in rows}

    two = by_id["t3-0"]
    assert [c["index"] for c in two["construals"]] == [1, 2] and two["pivotal_slots"] == ["intensity"]
    first = by_id["t1-0"]["construals"][0]
    assert first["explication"]["agency"] == "i"
    assert first["provenance"]["agency"] == {"source": "adjudicated", "by": "carol"}
    assert first["provenance"]["trigger"] == {"source": "unanimous"}
    assert first["routing"]["rule_set_version"] == "1" and first["routing"]["label"]
    assert (
        by_id["t4-0"]["reference_label"] == "fear" and by_id["t4-0"]["premise_field"] == gold_round.text_field
    )
    assert by_id["t4-0"]["tiers"] == [{"tier": "other", "item_set": "set-p"}]

    # every rendered line, with the cached judgement of exactly that (text, line) pair
    expected = [line.text for line in render(Explication.from_dict(first["explication"]))]
    assert [line["text"] for line in first["lines"]] == expected
    model = LineVerification.objects.values_list("model", flat=True).distinct().get()
    premise = Item.objects.get(source_id="t1-0").text_for(gold_round.text_field)
    sha = hashlib.sha256(premise.encode()).hexdigest()
    for line in first["lines"]:
        cached = LineVerification.objects.get(model=model, text_sha=sha, line=line["text"])
        assert line["p_entailment"] == round(cached.p_entailment, 6)
        assert line["p_entailment"] + line["p_neutral"] + line["p_contradiction"] == pytest.approx(
            1, abs=1e-5
        )
        assert line["entailed"] == (line["p_entailment"] >= 0.5)
        assert (line["verifier_model"], line["threshold"]) == (nli_path, 0.5)
        assert f"{line['verifier_model']}@{line['verifier_revision']}" == model
    entailed = sum(line["entailed"] for line in first["lines"])
    assert first["item_score"] == entailed / len(first["lines"])
    both = [line for c in two["construals"] for line in c["lines"]]
    assert two["item_score"] == sum(line["entailed"] for line in both) / len(both)

    manifest = json.loads(zf.read("manifest.json"))
    jsonl = zf.read("emoexpl.jsonl")
    assert manifest["files"]["emoexpl.jsonl"] == {
        "sha256": hashlib.sha256(jsonl).hexdigest(),
        "bytes": len(jsonl),
        "records": 4,
    }
    counts = manifest["counts"]
    assert (counts["items"], counts["construals"], counts["two_construals"]) == (4, 5, 1)
    assert counts["lines"] == sum(len(c["lines"]) for r in rows for c in r["construals"])
    assert counts["labels"]["fear"]["reference"] == 1
    assert sum(v["routed"] for v in counts["labels"].values()) == 4
    rule_set = active_rule_set()
    assert manifest["rule_set"] == {"version": rule_set.version, "hash": rule_set.content_hash, "rules": 13}
    alpha = manifest["agreement"]["prefilled"]["alpha"]
    assert set(alpha) == set(PRED) and alpha["trigger"] is None  # no variation: undefined, never 0 or 1
    assert manifest["verifier"]["model"] == nli_path and manifest["software_version"]
    assert manifest["renderer_version"] == nsmcore.RENDERER_VERSION == "3"
    card = zf.read("README.md").decode()
    assert "| other | set-p | 4 |" in card and "undefined (no variation)" in card
    assert "renderer version 3" in card
    assert json.loads(zf.read("record.schema.json")) == schema

    row = Export.objects.get(job=job)
    assert (row.records, row.created_by, row.round) == (4, admin_user, gold_round)
    assert row.sha256 == hashlib.sha256(row.path.read_bytes()).hexdigest()
    assert row.jsonl_sha256 == manifest["files"]["emoexpl.jsonl"]["sha256"]


def test_the_schema_in_the_docs_is_the_one_the_code_builds():
    assert json.loads(SCHEMA_FILE.read_text()) == record_schema()


def test_the_schema_rejects_a_record_that_breaks_it(gold_round, admin_user):
    row = records(archive(export_now(admin_user, round_=gold_round, verify=False)))[0]
    schema = json.loads(SCHEMA_FILE.read_text())
    broken = json.loads(json.dumps(row))
    broken["construals"][0]["explication"]["agency"] = "the-cat"
    with pytest.raises(jsonschema.ValidationError, match="the-cat"):
        jsonschema.validate(broken, schema)
    del row["construals"][0]["lines"][0]["p_entailment"]
    with pytest.raises(jsonschema.ValidationError, match="p_entailment"):
        jsonschema.validate(row, schema)


def test_the_same_database_gives_the_same_bytes(gold_round, admin_user, nli_path):
    first = Export.objects.get(job=export_now(admin_user, round_=gold_round, model=nli_path))
    data = first.path.read_bytes()
    cached = LineVerification.objects.count()
    second = Export.objects.get(job=export_now(admin_user, round_=gold_round, model=nli_path))
    assert LineVerification.objects.count() == cached  # every judgement came from the cache
    assert second.path.read_bytes() == data and second.sha256 == first.sha256
    assert second.filename == first.filename and first.filename.startswith("emoexpl-prefilled-")
    assert Export.objects.count() == 2  # the history keeps both


def test_the_kept_verified_lines_follow_a_changed_explication(gold_round, admin_user, nli_path):
    """Each construal's verified lines are kept after its first export; a construal changed since
    is verified again (never exported with the lines of what it was)."""
    from adjudication.models import GoldConstrual
    from exports.models import VerifiedLines

    first = records(archive(export_now(admin_user, round_=gold_round, model=nli_path)))
    assert VerifiedLines.objects.count() == sum(len(r["construals"]) for r in first) == 5
    changed = GoldConstrual.objects.get(gold__item__source_id="t1-0")
    kept_key = VerifiedLines.objects.get(construal=changed).slots_key
    slots = GoldConstrual.objects.get(gold__item__source_id="t2-0").slots
    assert slots != changed.slots
    GoldConstrual.objects.filter(pk=changed.pk).update(slots=slots)

    second = records(archive(export_now(admin_user, round_=gold_round, model=nli_path)))
    lines = {r["source_id"]: r["construals"][0]["lines"] for r in second}
    assert [line["text"] for line in lines["t1-0"]] == [
        line.text for line in render(Explication.from_dict(slots))
    ]
    model = LineVerification.objects.values_list("model", flat=True).distinct().get()
    sha = hashlib.sha256(
        Item.objects.get(source_id="t1-0").text_for(gold_round.text_field).encode()
    ).hexdigest()
    for line in lines["t1-0"]:
        cached = LineVerification.objects.get(model=model, text_sha=sha, line=line["text"])
        assert line["p_entailment"] == round(cached.p_entailment, 6)
    assert VerifiedLines.objects.count() == 5  # the construal's row was replaced, not added to
    assert VerifiedLines.objects.get(construal=changed).slots_key != kept_key
    assert [r for r in second if r["source_id"] != "t1-0"] == [r for r in first if r["source_id"] != "t1-0"]


def test_a_model_path_with_percent_signs_and_items_in_several_sets(gold_round, admin_user, tmp_path):
    from annotator.models import ItemSet, ItemSetMember

    path = str(build_tiny_nli(tmp_path / "nli %s 100%", labels=("entailment", "neutral", "contradiction")))
    item = Item.objects.get(source_id="t4-0")
    for name, tier in (("zz-eval", "eval"), ("aa-pilot", "P")):
        ItemSetMember.objects.create(
            item_set=ItemSet.objects.create(name=name, tier=tier), item=item, position=1
        )
    for _ in range(2):  # building the kept lines, then reading them
        rows = {
            r["source_id"]: r for r in records(archive(export_now(admin_user, round_=gold_round, model=path)))
        }
        assert {line["verifier_model"] for c in rows["t1-0"]["construals"] for line in c["lines"]} == {path}
        assert rows["t4-0"]["tiers"] == [
            {"tier": "P", "item_set": "aa-pilot"},
            {"tier": "eval", "item_set": "zz-eval"},
            {"tier": "other", "item_set": "set-p"},
        ]
        assert rows["t1-0"]["tiers"] == [{"tier": "other", "item_set": "set-p"}]


def test_without_verification_the_lines_say_so(gold_round, admin_user):
    job = export_now(admin_user, verify=False)  # the whole gold corpus
    zf = archive(job)
    line = records(zf)[0]["construals"][0]["lines"][0]
    assert (line["p_entailment"], line["entailed"], line["verifier_model"]) == (None, None, None)
    assert json.loads(zf.read("manifest.json"))["verifier"] is None
    card = zf.read("README.md").decode()
    assert "Not verified" in card
    # the card's opening says so too: it claimed every line was checked by an NLI model (issue 25)
    opening = card.split("\n\n- Scope")[0]
    assert "checked against the text by an NLI model" not in opening and "not checked" in opening
    assert Export.objects.get(job=job).filename.startswith("emoexpl-all-")


def test_a_missing_model_folder_is_refused_and_an_unloadable_model_fails_the_job(
    submitted, admin_user, tmp_path
):
    with pytest.raises(JobError, match="no model folder at /models/none, or export without verification"):
        export_start(user=admin_user, model="/models/none")
    assert not Job.objects.filter(kind="export").exists()
    # a folder that exists is loaded by the job, not by the request that starts it
    sentiment = build_tiny_nli(tmp_path / "sentiment", labels=("negative", "positive"))
    job = export_start(user=admin_user, round_=submitted, model=str(sentiment), enqueue=False)
    assert job.status == "queued"
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "no entailment label" in job.error
    assert "--no-verify" in job.error and not Export.objects.exists()


def test_nothing_to_export_is_said_plainly(prefilled_round, admin_user):
    with pytest.raises(JobError, match="no resolved gold item yet"):
        export_start(user=admin_user, round_=prefilled_round, verify=False)


def test_a_crash_mid_export_leaves_no_file_and_the_rerun_completes(
    gold_round, admin_user, settings, monkeypatch
):
    settings.NSM_EXPORT_BATCH_SIZE = 1
    real = export_module.batch_records
    calls = {"n": 0}

    def crash_on_third(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(export_module, "batch_records", crash_on_third)
    job = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    with pytest.raises(OSError):
        job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "disk full" in job.error and job.done == 2
    folder = Path(settings.NSM_EXPORT_DIR)
    assert list(folder.iterdir()) == [] and not Export.objects.exists()

    monkeypatch.setattr(export_module, "batch_records", real)
    job_resume(job=job)
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("done", 4)
    assert [p.name for p in folder.iterdir()] == [Export.objects.get().filename]


def test_a_killed_workers_leftover_is_removed_by_the_rerun(gold_round, admin_user, settings):
    job = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    folder = Path(settings.NSM_EXPORT_DIR)
    folder.mkdir(parents=True)
    (folder / f".partial-job{job.pk}.zip").write_bytes(b"PK half an archive")  # what a SIGKILL leaves
    job_run(job.pk)
    assert [p.name for p in folder.iterdir()] == [Export.objects.get().filename]


def test_admins_start_watch_and_download_exports(
    client, gold_round, admin_user, annotator, adjudicator, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    page = client.get("/exports/").content.decode()
    assert 'id="export-form"' in page and "No export yet." in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/", {"round": gold_round.pk, "model": ""})  # verify unchecked
    assert response.status_code == 302
    detail = client.get(response["Location"]).content.decode()
    assert 'id="export-download"' in detail and "4 records" in detail
    export = Export.objects.get()
    listing = client.get("/exports/").content.decode()
    assert export.filename in listing and "not verified" in listing
    download = client.get(f"/exports/{export.pk}/download/")
    assert download.status_code == 200
    assert download["Content-Disposition"] == f'attachment; filename="{export.filename}"'
    body = b"".join(download.streaming_content)
    assert zipfile.ZipFile(io.BytesIO(body)).namelist()[0] == "emoexpl.jsonl"
    for user in (annotator, adjudicator):
        client.force_login(user)
        assert client.get(f"/exports/{export.pk}/download/").status_code == 403
        assert client.get("/exports/").status_code == 403
    client.force_login(admin_user)
    export.path.unlink()
    gone = client.get(f"/exports/{export.pk}/download/")
    assert gone.status_code == 404


def test_the_page_names_a_refused_model(client, gold_round, admin_user, nli_path, settings):
    settings.NSM_VERIFIER_MODEL = nli_path  # verification is on; the form names a missing folder
    client.force_login(admin_user)
    response = client.post("/exports/", {"round": gold_round.pk, "verify": "on", "model": "/models/none"})
    assert response.status_code == 400
    assert "no model folder at /models/none" in response.content.decode()
    assert not Job.objects.exists()


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread, on its own connection
def test_the_command_exports_and_copies_the_archive(gold_round, tmp_path):
    out = io.StringIO()
    call_command(
        "export_corpus", "--round", gold_round.name, "--no-verify", "--out", str(tmp_path), stdout=out
    )
    export = Export.objects.get()
    assert f"4 records, {export.lines} lines in {tmp_path / export.filename}" in out.getvalue()
    assert (tmp_path / export.filename).read_bytes() == export.path.read_bytes()
    with pytest.raises(CommandError, match="no round named 'nope'"):
        call_command("export_corpus", "--round", "nope")


def test_the_archive_is_written_by_reading_only_after_its_named_writes(gold_round, tmp_path):
    """Opening gold records and storing the agreement snapshot are export_prepare's; export_write
    reads the database and writes nothing to it (without verification: no judgement to cache)."""
    writes: list[str] = []

    def record(execute, sql, params, many, context):
        if re.match(r"\s*(INSERT|UPDATE|DELETE)\b", sql, re.IGNORECASE):
            writes.append(sql[:120])
        return execute(sql, params, many, context)

    export_module.export_prepare(gold_round)
    assert AgreementSnapshot.objects.filter(round=gold_round).exists()
    with connection.execute_wrapper(record):
        path, manifest = export_module.export_write(
            round_=gold_round, verifier=None, folder=tmp_path, tag="t"
        )
    assert writes == []
    assert (
        path.exists()
        and manifest["counts"]["items"]
        == GoldItem.objects.filter(round=gold_round, status=GoldItem.Status.RESOLVED).count()
        > 0
    )
