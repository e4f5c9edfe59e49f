"""The raw-annotation export: every revision of every annotator's work in a round, as JSONL or CSV,
each row checked against the database; the file written whole or not at all; the Exports page, the
API's refusals and the command."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

import nsmcore
from annotator.models import SLOT_FIELDS, Annotation, AnnotationRevision, Assignment, ParserPrediction
from annotator.services import annotation_submit
from exports import raw_export
from exports.models import Export
from exports.raw_export import COLUMNS, raw_export_start
from jobs.models import Job
from jobs.services import job_run
from rules.rulesets import active_rule_set
from tests.factories import PRED

#: text a CSV must quote: a comma, quotes, a line break and non-ASCII
AWKWARD = 'a comma, "quotes"\nand a second line: café'


@pytest.fixture(autouse=True)
def _export_dir(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"


@pytest.fixture
def revised(submitted, other_annotator):
    """The submitted round where bob saves his first item twice more: a second revision that changes
    intensity and writes awkward notes, and a third with residue (which abstains)."""
    assignment = Assignment.objects.filter(round=submitted, annotator=other_annotator).order_by("item_id")[0]
    annotation_submit(
        assignment=assignment, user=other_annotator, base_version=1, time_spent_ms=4200,
        values={**PRED, "agency": "someone-else", "intensity": "very", "notes": AWKWARD},
    )  # fmt: skip
    annotation_submit(
        assignment=assignment, user=other_annotator, base_version=2, time_spent_ms=900,
        values={**PRED, "residue": "something the slots cannot say", "notes": "third"},
    )  # fmt: skip
    return submitted


def export_now(user, round_, fmt: str) -> Job:
    job = raw_export_start(user=user, round_=round_, format=fmt, enqueue=False)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    return job


def revisions_in_order(round_):
    return list(
        AnnotationRevision.objects.filter(annotation__assignment__round=round_)
        .select_related("annotation__assignment__item", "annotation__assignment__annotator")
        .order_by("annotation__assignment__item_id", "annotation__assignment__annotator_id", "version")
    )


def expected_row(rev: AnnotationRevision) -> dict:
    """What the export must say of a revision, read from the database here, field by field."""
    annotation = rev.annotation
    assignment = annotation.assignment
    routing = nsmcore.route({**rev.slots, "residue": rev.residue}, active_rule_set())
    first = annotation.revisions.order_by("version").first()
    prefill = annotation.prefill
    version = (
        ParserPrediction.objects.filter(item=assignment.item, parser="lex").values_list(
            "parser_version", flat=True
        )[0]
        if prefill
        else ""
    )
    return {
        "round": assignment.round.name, "item_id": assignment.item_id, "source": assignment.item.source,
        "source_id": assignment.item.source_id, "annotator": assignment.annotator.username,
        "assignment": assignment.pk, "assignment_status": assignment.status, "revision": rev.version,
        "latest": rev.version == annotation.version, **{s: rev.slots[s] for s in SLOT_FIELDS},
        "residue": rev.residue, "notes": rev.notes, "flags": rev.flags, "label": routing.label,
        "abstention": routing.abstention_type or "", "rule_set_version": routing.rule_set_version,
        "prefilled": bool(prefill), "prefill_parser": "lex" if prefill else "",
        "prefill_parser_version": version, "prefill": prefill, "kept_prefill": rev.kept_prefill,
        "changed_from_prefill": [s for s in SLOT_FIELDS if prefill and prefill[s] != rev.slots[s]],
        "time_spent_ms": rev.time_spent_ms, "created_at": first.created_at.isoformat(),
        "submitted_at": rev.created_at.isoformat(),
    }  # fmt: skip


def test_every_revision_is_a_jsonl_line_that_matches_the_database(revised, admin_user):
    ParserPrediction.objects.filter(parser="lex").update(parser_version="lex-2")
    job = export_now(admin_user, revised, "jsonl")
    export = Export.objects.get(job=job)
    data = export.path.read_bytes()
    rows = [json.loads(line) for line in data.decode().splitlines()]
    revisions = revisions_in_order(revised)
    assert len(rows) == len(revisions) == 10  # 8 first saves, and bob's two more on one item
    for row, rev in zip(rows, revisions, strict=True):
        assert list(row) == list(COLUMNS)
        assert row == expected_row(rev)
    bob_first = [r for r in rows if r["annotator"] == "bob" and r["source_id"] == "t1-0"]
    assert [r["revision"] for r in bob_first] == [1, 2, 3]
    assert [r["latest"] for r in bob_first] == [False, False, True]
    assert bob_first[1]["notes"] == AWKWARD and bob_first[1]["time_spent_ms"] == 4200
    assert bob_first[1]["changed_from_prefill"] == ["agency", "intensity"]
    assert bob_first[2]["label"] == "abstain" and bob_first[2]["abstention"] == "schema-residue"
    assert {r["prefill_parser_version"] for r in rows} == {"lex-2"}
    assert (export.kind, export.records, export.bytes) == ("raw", 10, len(data))
    assert export.sha256 == hashlib.sha256(data).hexdigest() == export.jsonl_sha256
    assert export.filename == f"annotations-prefilled-{export.sha256[:12]}.jsonl"
    assert export.manifest["annotations"] == Annotation.objects.filter(assignment__round=revised).count() == 8
    assert export.manifest["annotators"] == ["alice", "bob"]
    assert job.summary["export"] == export.pk and (job.done, job.total) == (10, 10)


def test_the_csv_has_a_header_one_column_per_slot_and_parses_back(revised, admin_user):
    job = export_now(admin_user, revised, "csv")
    export = Export.objects.get(job=job)
    text = export.path.read_bytes().decode()
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    assert header == list(COLUMNS) and set(SLOT_FIELDS) <= set(header)
    parsed = [dict(zip(header, cells, strict=True)) for cells in reader]
    revisions = revisions_in_order(revised)
    assert len(parsed) == len(revisions)
    for row, rev in zip(parsed, revisions, strict=True):
        want = expected_row(rev)
        for name in COLUMNS:
            value = want[name]
            if name in raw_export.JSON_COLUMNS:
                assert (json.loads(row[name]) if row[name] else None) == value, name
            elif isinstance(value, bool):
                assert row[name] == ("true" if value else "false"), name
            else:
                assert row[name] == str(value), name
    assert AWKWARD in [row["notes"] for row in parsed]  # quoted, line break and all
    assert export.jsonl_sha256 == "" and export.sha256 == hashlib.sha256(text.encode()).hexdigest()


def test_a_blind_round_says_nothing_was_prefilled(blind_round, annotator):
    assignment = Assignment.objects.filter(round=blind_round, annotator=annotator).first()
    annotation_submit(assignment=assignment, user=annotator, values=PRED, base_version=0)
    job = export_now(annotator, blind_round, "jsonl")
    (row,) = [json.loads(line) for line in Export.objects.get(job=job).path.read_text().splitlines()]
    assert row["prefilled"] is False and row["prefill"] is None
    assert (row["prefill_parser"], row["kept_prefill"], row["changed_from_prefill"]) == ("", [], [])
    assert row == expected_row(AnnotationRevision.objects.get(annotation__assignment=assignment))


def test_a_round_with_no_submissions_gives_a_header_alone_or_an_empty_file(prefilled_round, admin_user):
    csv_job = export_now(admin_user, prefilled_round, "csv")
    csv_export = Export.objects.get(job=csv_job)
    assert csv_export.path.read_text().splitlines() == [",".join(COLUMNS)]
    jsonl_export = Export.objects.get(job=export_now(admin_user, prefilled_round, "jsonl"))
    assert jsonl_export.path.read_bytes() == b""
    assert (csv_export.records, jsonl_export.records) == (0, 0)


def test_a_cancelled_export_leaves_no_file_and_no_history(revised, admin_user, settings, monkeypatch):
    monkeypatch.setattr(raw_export, "CHUNK", 3)  # a read an item: cancel is read between them
    calls = []

    def stop_at_second(job_id):
        calls.append(job_id)
        return len(calls) >= 2

    monkeypatch.setattr(raw_export, "job_stopped", stop_at_second)
    job = raw_export_start(user=admin_user, round_=revised, format="csv", enqueue=False)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "running"  # the real job_stopped marks it cancelled; this stand-in only says stop
    first_item = revised.assignments.order_by("item_id").values_list("item_id", flat=True).first()
    first_read = AnnotationRevision.objects.filter(annotation__assignment__round=revised)
    assert job.done == first_read.filter(annotation__assignment__item_id=first_item).count() < job.total
    assert not Export.objects.exists()
    assert list(settings.NSM_EXPORT_DIR.iterdir()) == []  # not even the hidden temporary file


def test_the_exports_page_starts_it_and_lists_it_for_download(client, revised, admin_user):
    client.force_login(admin_user)
    page = client.get(reverse("exports"))
    assert page.status_code == 200 and b'id="raw-export-form"' in page.content
    response = client.post(reverse("export_raw"), {"round": revised.pk, "format": "csv"})
    job = Job.objects.get(kind="rawexport")
    assert response.status_code == 302 and response["Location"] == reverse("job_detail", args=[job.pk])
    assert (job.round, job.params, job.created_by) == (revised, {"format": "csv"}, admin_user)
    job_run(job.pk)
    export = Export.objects.get(job=job)
    listed = client.get(reverse("exports")).content.decode()
    assert export.filename in listed and "raw annotations" in listed
    detail = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert reverse("export_download", args=[export.pk]) in detail
    download = client.get(reverse("export_download", args=[export.pk]))
    assert download["Content-Type"] == "text/csv; charset=utf-8"
    assert b"".join(download.streaming_content) == export.path.read_bytes()


def test_the_page_refuses_a_bad_format_and_starts_nothing(client, revised, admin_user):
    client.force_login(admin_user)
    response = client.post(reverse("export_raw"), {"round": revised.pk, "format": "xml"})
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"round": "R", "format": "xml"}, "format"),
        ({"format": "csv"}, "round"),
        ({"round": 999_999, "format": "csv"}, "round"),
        ({"round": "R", "format": ["csv"]}, "format"),
    ],
)
def test_bad_parameters_are_a_400_naming_the_field(client, revised, admin_user, body, field):
    client.force_login(admin_user)
    if body.get("round") == "R":
        body = {**body, "round": revised.pk}
    response = client.post(reverse("api_job_rawexport"), body, content_type="application/json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Job.objects.exists()


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread, on its own connection
def test_the_command_writes_the_file_and_exits_2_on_bad_input(revised, tmp_path, capsys):
    out = tmp_path / "mine.csv"
    call_command("export_annotations", "--round", revised.name, "--format", "csv", "--out", str(out))
    export = Export.objects.get(kind="raw")
    assert out.read_bytes() == export.path.read_bytes()
    assert len(list(csv.reader(io.StringIO(out.read_text(), newline="")))) == 1 + 10
    assert "10 revisions of round prefilled" in capsys.readouterr().out
    for args, named in (
        (["--round", "nope"], "--round"),
        (["--round", revised.name, "--format", "xml"], "--format"),
        (["--round", revised.name, "--out", str(tmp_path / "no" / "x.csv")], "--out"),
    ):
        with pytest.raises(CommandError) as refused:
            call_command("export_annotations", *args)
        assert refused.value.returncode == 2 and named in str(refused.value)
    assert Job.objects.count() == 1
