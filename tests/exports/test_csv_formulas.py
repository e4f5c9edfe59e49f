"""CSV formula injection (issue 24): text an annotator or an importer chose (notes, residue, a
source id, a round's name) that starts with =, +, -, @, a tab or a carriage return reaches every CSV
the site writes with a leading apostrophe, so a spreadsheet shows it instead of running it; figures
stay numbers (a negative one too), and the JSONL export keeps the text exactly."""

from __future__ import annotations

import csv
import io
import json

import pytest

from annotator.models import Assignment, Item, Round
from annotator.services import annotation_submit
from exports.models import Export
from exports.raw_export import raw_export_start
from jobs.services import job_run
from learning.services import queue_compute, queue_policy_set
from tests.factories import PRED

NOTES = '=HYPERLINK("http://evil.example/","click")'
RESIDUE = "@SUM(1+1)"
SOURCE_ID = "-2+3"
SOURCE = "+cmd|' /C calc'!A0"
ROUND = "=cmd"

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _export_dir(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"


@pytest.fixture
def hostile(submitted, other_annotator):
    """The submitted round named =cmd, its first item's source and source id formulas, and bob's
    second save of that item with a formula in its notes and residue."""
    Round.objects.filter(pk=submitted.pk).update(name=ROUND)
    submitted.refresh_from_db()
    assignment = Assignment.objects.filter(round=submitted, annotator=other_annotator).order_by("item_id")[0]
    Item.objects.filter(pk=assignment.item_id).update(source_id=SOURCE_ID, source=SOURCE)
    annotation_submit(
        assignment=assignment, user=other_annotator, base_version=1, time_spent_ms=0,
        values={**PRED, "agency": "someone-else", "residue": RESIDUE, "notes": NOTES},
    )  # fmt: skip
    return submitted


def raw_export(user, round_, fmt: str) -> bytes:
    job = raw_export_start(user=user, round_=round_, format=fmt, enqueue=False)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    return Export.objects.get(job=job).path.read_bytes()


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def no_formula(rows: list[list[str]]) -> None:
    """No cell a spreadsheet would read as a formula, other than a plain (negative) number."""
    for row in rows:
        for cell in row:
            if cell[:1] in ("=", "+", "@", "\t", "\r"):
                raise AssertionError(f"a formula in {row}")
            if cell.startswith("-"):
                float(cell)  # a figure, not text


def test_the_raw_csv_quotes_formulas_and_the_jsonl_keeps_them(hostile, admin_user):
    rows = cells(raw_export(admin_user, hostile, "csv").decode())
    no_formula(rows)
    header, body = rows[0], [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]
    bob = [r for r in body if r["annotator"] == "bob" and r["revision"] == "2"]
    assert len(bob) == 1
    assert (bob[0]["notes"], bob[0]["residue"]) == ("'" + NOTES, "'" + RESIDUE)
    assert (bob[0]["source_id"], bob[0]["source"]) == ("'" + SOURCE_ID, "'" + SOURCE)
    assert {r["round"] for r in body} == {"'" + ROUND}
    assert bob[0]["item_id"].isdigit() and bob[0]["time_spent_ms"] == "0"
    assert "round" in header
    jsonl = [json.loads(line) for line in raw_export(admin_user, hostile, "jsonl").decode().splitlines()]
    saved = next(r for r in jsonl if r["annotator"] == "bob" and r["revision"] == 2)
    assert (saved["notes"], saved["residue"], saved["source_id"]) == (NOTES, RESIDUE, SOURCE_ID)
    assert saved["round"] == ROUND and saved["source"] == SOURCE


def test_the_conflicts_and_agreement_downloads_quote_formulas(client, adjudicator, hostile):
    client.force_login(adjudicator)
    response = client.get(f"/adjudicate/rounds/{hostile.pk}/conflicts.csv")
    assert response.status_code == 200
    rows = cells(response.content.decode())
    no_formula(rows)
    assert sorted({r[1] for r in rows[1:] if r[1].startswith("'")}) == ["'" + SOURCE_ID]
    agreement = client.get(f"/adjudicate/rounds/{hostile.pk}/agreement.csv")
    assert agreement.status_code == 200
    no_formula(cells(agreement.content.decode()))


def test_the_learning_queue_download_quotes_formulas_and_keeps_figures(client, adjudicator, hostile):
    policy = queue_policy_set(
        round_=hostile, user=None, order="mixed", random_share=0.5, seed=1, parser="lex"
    )
    queue_compute(policy=policy)
    client.force_login(adjudicator)
    response = client.get(f"/adjudicate/rounds/{hostile.pk}/queue.csv")
    assert response.status_code == 200
    rows = cells(response.content.decode())
    no_formula(rows)
    by_source = {r[2]: r for r in rows[1:]}
    assert "'" + SOURCE_ID in by_source
    assert all(float(r[3]) >= 0 for r in rows[1:])  # the score, a number
