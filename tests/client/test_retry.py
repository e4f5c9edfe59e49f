"""A 503 with Retry-After, against a stub server the test starts: the client waits what the server
asks (capped) and sends the request again, a bounded number of times; a 503 that kept a job is not
sent again, and ``start_job`` resumes the job instead. The waits are recorded, not slept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from nsmclient import ServiceUnavailable
from nsmclient.errors import retry_after

DOWN = (503, {"Retry-After": "7"}, {"detail": "the database is not answering; nothing was saved"})
JOB = {"id": 7, "status": "queued", "kind": "export"}


def test_a_503_is_sent_again_after_the_wait_the_server_asks_for(stub, client, waits):
    stub.answer("GET", "/api/rounds/", DOWN, DOWN, (200, {}, {"count": 0, "results": []}))
    assert client.rounds_list() == {"count": 0, "results": []}
    assert waits == [7.0, 7.0]
    assert stub.requests() == [("GET", "/api/rounds/")] * 3


def test_the_retries_are_bounded_and_each_wait_capped(stub, client, waits):
    stub.answer("GET", "/api/rounds/", (503, {"Retry-After": "3600"}, {"detail": "down"}))
    with pytest.raises(ServiceUnavailable) as refused:
        client.rounds_list()
    assert waits == [60.0, 60.0, 60.0] and len(stub.seen) == 4  # the first try and three more
    assert (refused.value.status, refused.value.retry_after, refused.value.detail) == (503, 3600.0, "down")


def test_a_503_without_retry_after_is_raised_at_once(stub, client, waits):
    stub.answer("GET", "/api/rounds/", (503, {}, {"detail": "maintenance"}))
    with pytest.raises(ServiceUnavailable):
        client.rounds_list()
    assert waits == [] and len(stub.seen) == 1


def test_a_post_that_saved_nothing_is_sent_again_whole(stub, client, waits):
    stub.answer("POST", "/api/imports/", DOWN, (201, {}, {"rows": 1}))
    assert client.import_items(file=("rows.jsonl", b'{"text_id": "x"}'), item_set="s") == {"rows": 1}
    first, second = (body.replace(body[2 : body.index(b"\r\n")], b"B") for *_, body in stub.seen)
    assert first == second and b'{"text_id": "x"}' in second and b'name="item_set"' in second
    assert waits == [7.0]


def test_a_job_kept_by_a_503_is_not_started_twice_but_resumed(stub, client, waits):
    kept = (503, {"Retry-After": "30"}, {"detail": "the job queue cannot be reached", "job": 7})
    stub.answer("POST", "/api/jobs/export/", kept)
    with pytest.raises(ServiceUnavailable) as refused:
        client.jobs_export_create({"round": 3, "verify": False})
    assert refused.value.job == 7 and len(stub.seen) == 1 and waits == []

    stub.seen.clear()
    stub.answer("POST", "/api/jobs/7/resume/", (200, {}, JOB))
    stub.answer("GET", "/api/jobs/7/", (200, {}, JOB))
    assert client.start_job(client.jobs_export_create, {"round": 3, "verify": False}) == JOB
    assert stub.requests() == [
        ("POST", "/api/jobs/export/"),
        ("POST", "/api/jobs/7/resume/"),
        ("GET", "/api/jobs/7/"),
    ]
    assert waits == [30.0]


def test_a_job_the_queue_still_refuses_is_resumed_a_bounded_number_of_times(stub, client, waits):
    stub.answer("POST", "/api/jobs/export/", (503, {"Retry-After": "30"}, {"detail": "down", "job": 7}))
    stub.answer("POST", "/api/jobs/7/resume/", (200, {}, JOB))
    stub.answer("GET", "/api/jobs/7/", (200, {}, {**JOB, "status": "failed", "error": "queue down"}))
    with pytest.raises(ServiceUnavailable) as refused:
        client.start_job(client.jobs_export_create, {"round": 3})
    assert refused.value.job == 7 and waits == [30.0, 1.0, 1.0]
    assert stub.requests().count(("POST", "/api/jobs/7/resume/")) == 3


def test_retry_after_reads_seconds_and_http_dates():
    def answer(value: str) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": value})

    assert retry_after(answer("5")) == 5.0
    assert retry_after(answer("-3")) == 0.0
    later = retry_after(answer(format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)))
    assert later is not None and 100 < later <= 120
    assert retry_after(answer("soon")) is None
    assert retry_after(httpx.Response(503)) is None
