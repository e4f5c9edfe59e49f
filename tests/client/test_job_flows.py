"""Waiting for a job and downloading what it made, against the stub server: the progress callback
sees each state read, a failed job and a job past the timeout are raised, and a download goes to
the client's own server only, whatever host the link names, written whole or not at all."""

from __future__ import annotations

import pytest

from nsmclient import JobFailed, NotFound

RUNNING = {"id": 7, "kind": "export", "status": "running", "done": 1, "total": 4, "error": ""}


def test_wait_for_job_reports_each_state_and_returns_the_finished_job(stub, client, waits):
    done = {**RUNNING, "status": "done", "done": 4, "download": f"{stub.url}/api/exports/3/download/"}
    stub.answer("GET", "/api/jobs/7/", (200, {}, RUNNING), (200, {}, {**RUNNING, "done": 3}), (200, {}, done))
    states: list[dict] = []
    assert client.wait_for_job(7, progress=states.append, interval=2.5) == done
    assert [s["done"] for s in states] == [1, 3, 4] and waits == [2.5, 2.5]


def test_a_failed_job_is_raised_with_its_last_state(stub, client, waits):
    failed = {**RUNNING, "status": "failed", "error": "no resolved gold item yet"}
    stub.answer("GET", "/api/jobs/7/", (200, {}, RUNNING), (200, {}, failed))
    with pytest.raises(JobFailed, match="no resolved gold item yet") as raised:
        client.wait_for_job(RUNNING)
    assert raised.value.job == failed and waits == [1.0]


def test_a_job_still_running_after_the_timeout_is_a_timeout_error(stub, client, waits):
    stub.answer("GET", "/api/jobs/7/", (200, {}, RUNNING))
    with pytest.raises(TimeoutError, match="job #7 is still running"):
        client.wait_for_job(7, timeout=0)
    assert waits == []


def test_a_download_goes_to_this_server_and_takes_the_servers_file_name(stub, client, tmp_path):
    archive = b"PK\x03\x04 an archive"
    named = {"Content-Disposition": 'attachment; filename="emoexpl-r3.zip"'}
    stub.answer("GET", "/api/exports/3/download/", (200, named, archive))
    job = {"id": 7, "status": "done", "download": "http://proxy-renamed.example/api/exports/3/download/"}
    saved = client.download_export(job, tmp_path)
    assert saved == tmp_path / "emoexpl-r3.zip" and saved.read_bytes() == archive
    method, path, headers, _ = stub.seen[-1]
    assert (method, path, headers["Authorization"]) == ("GET", "/api/exports/3/download/", "Token k")
    assert client.download_export(3, tmp_path / "copy.zip").read_bytes() == archive


def test_a_refused_download_writes_nothing_and_a_job_without_a_file_is_refused(stub, client, tmp_path):
    stub.answer("GET", "/api/exports/4/download/", (404, {}, {"detail": "no such export"}))
    with pytest.raises(NotFound, match="no such export"):
        client.download_export(4, tmp_path / "x.zip")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="running"):
        client.download_export({**RUNNING, "download": None}, tmp_path)
