"""Workers killed mid-job, through real worker processes: nobody resumes anything by hand. The
killed job shows stalled within seconds (no heartbeat), a new worker's sweeper puts it back in
the queue, and it completes from where it was: every item parsed once, one export archive,
whole, and nothing half-written left behind. Prefill on Redis with PostgreSQL and on the
embedded filesystem broker with SQLite; the export on Redis with PostgreSQL."""

from __future__ import annotations

import hashlib
import signal
import sqlite3
import time
import zipfile
from collections.abc import Callable
from contextlib import closing

import psycopg
import pytest
import redis

from nsmcore.tiny import build_tiny_nli
from tests.explications import PRIDE
from tests.fake_openai import FakeChatServer
from tests.integration.deployment import Deployment, postgres_row, sqlite_row, write_items
from tests.integration.test_export_worker import N_ITEMS as N_GOLD
from tests.integration.test_export_worker import make_gold_run, queued

pytestmark = pytest.mark.integration
N_ITEMS = 80
# a beat a second, stalled after three missed: the test waits seconds, not the default 15
FAST_BEATS = {"NSM_JOB_HEARTBEAT_SECONDS": "1", "NSM_JOB_STALL_SECONDS": "3"}


def kill_worker_when(deployment: Deployment, job_id: int, reached: Callable[[tuple], bool]) -> None:
    """SIGKILL the worker (no warning, no cleanup: a machine lost, an OOM kill) once the job's
    row satisfies ``reached``, with a deadline."""
    deadline = time.monotonic() + 120
    while not reached(row := deployment.row(job_id)):
        assert row[0] in ("queued", "running"), f"the job ended before it could be killed: {row}"
        assert time.monotonic() < deadline, (
            f"the job did not get there: {row}\n{deployment.worker_log()[-2000:]}"
        )
        time.sleep(0.005)
    deployment.worker.send_signal(signal.SIGKILL)
    deployment.worker.wait()


def stalled_within(deployment: Deployment, job_id: int, seconds: float) -> float:
    """Seconds until the job page's rule (Job.stalled) says the killed job is stalled."""
    start = time.monotonic()
    check = (
        f"from jobs.models import Job; j = Job.objects.get(pk={job_id}); "
        "print('stalled' if j.stalled else f'alive {j.status} {j.heartbeat_at} {j.runner}')"
    )
    while (said := deployment.manage("shell", "-c", check).splitlines()[-1]) != "stalled":
        assert time.monotonic() - start < seconds, f"job {job_id} not stalled within {seconds} s: {said}"
        time.sleep(0.2)
    return time.monotonic() - start


def prefill_killed_and_resumed(deployment: Deployment, tmp_path) -> None:
    """A prefill through a slow parser server, its worker killed midway, then a new worker and
    no one else."""
    deployment.migrate()
    deployment.manage("import_items", str(write_items(tmp_path / "items.jsonl", N_ITEMS)), "--source", "it")
    deployment.manage("draw_item_set", "all", "--size", str(N_ITEMS), "--seed", "1")
    with FakeChatServer(lambda payload: PRIDE.slots(), delay=0.1) as server:
        deployment.env |= {"NSM_OPENAI_BASE_URL": server.base_url, "NSM_OPENAI_MODEL": "fake-model"}
        deployment.start_worker()
        try:
            out = deployment.manage("prefill", "--item-set", "all", "--backend", "openai", "--background")
            job_id = queued(out)
            kill_worker_when(deployment, job_id, lambda row: row[1] >= 12)
            status, done, total, _ = deployment.row(job_id)
            assert status == "running" and 0 < done < total, "killed mid-prefill"
            waited = stalled_within(deployment, job_id, 30)
            print(f"killed prefill seen stalled {waited:.1f} s after the kill")
            deployment.start_worker()
            seen = deployment.watch(job_id, timeout=180)
        finally:
            deployment.stop()
    assert seen[-1] == ("done", N_ITEMS, N_ITEMS, ""), deployment.worker_log()[-3000:]
    assert "back to the queue" in deployment.worker_log(), "the new worker's sweeper resumed it"


def assert_every_item_parsed_once(conn) -> None:
    """The database holds one job: done, and every item with exactly one prediction."""
    per_item = conn.execute("SELECT item_id, count(*) FROM annotator_parserprediction GROUP BY item_id")
    counts = [n for _, n in per_item.fetchall()]
    assert len(counts) == N_ITEMS and set(counts) == {1}
    status, skipped, done, total = conn.execute(
        "SELECT status, skipped, done, total FROM jobs_job"
    ).fetchone()
    assert (status, done, total) == ("done", N_ITEMS, N_ITEMS)
    # what the killed run parsed is kept (one prediction per item, above) and counted as this
    # job's own work, not as skipped: skipped counts another job's predictions (issue 24)
    assert skipped == 0


def test_a_prefill_whose_worker_is_killed_on_redis_completes_by_itself(
    tmp_path, redis_url, postgres_database
):
    env = {"DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_JOB_BATCH_SIZE": "4", **FAST_BEATS}
    deployment = Deployment(tmp_path, env, postgres_row(postgres_database))
    prefill_killed_and_resumed(deployment, tmp_path)
    with psycopg.connect(postgres_database) as conn:
        assert_every_item_parsed_once(conn)


def test_a_prefill_whose_worker_is_killed_on_the_embedded_broker_completes_by_itself(tmp_path):
    """The filesystem broker deletes a message when a worker takes it (no acknowledgement to
    withhold): the heartbeat sweeper alone brings the job back."""
    db = tmp_path / "app.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{db}", "NSM_JOB_BATCH_SIZE": "4", **FAST_BEATS}
    deployment = Deployment(tmp_path, env, sqlite_row(db))
    prefill_killed_and_resumed(deployment, tmp_path)
    with closing(sqlite3.connect(db)) as conn:
        assert_every_item_parsed_once(conn)


def test_a_killed_workers_message_stays_unacknowledged_in_redis(tmp_path, redis_url, postgres_database):
    """run_job is acknowledged late: after a SIGKILL mid-job its message is still held in Redis,
    to be handed out again (visibility_timeout); the second delivery, to the next worker, finds
    the job no longer queued (running without a heartbeat, or already resumed and done) and does
    nothing: the job completes once, by the sweeper's resume."""
    env = {
        "DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_JOB_BATCH_SIZE": "4",
        # the dead worker's message is handed out again as soon as a worker looks
        "NSM_JOB_REDELIVER_SECONDS": "1", **FAST_BEATS,
    }  # fmt: skip
    deployment = Deployment(tmp_path, env, postgres_row(postgres_database))
    deployment.migrate()
    deployment.manage("import_items", str(write_items(tmp_path / "items.jsonl", N_ITEMS)), "--source", "it")
    deployment.manage("draw_item_set", "all", "--size", str(N_ITEMS), "--seed", "1")
    broker = redis.Redis.from_url(redis_url)
    with FakeChatServer(lambda payload: PRIDE.slots(), delay=0.1) as server:
        deployment.env |= {"NSM_OPENAI_BASE_URL": server.base_url, "NSM_OPENAI_MODEL": "fake-model"}
        deployment.start_worker()
        try:
            job_id = queued(
                deployment.manage("prefill", "--item-set", "all", "--backend", "openai", "--background")
            )
            kill_worker_when(deployment, job_id, lambda row: row[1] >= 8)
            assert broker.hlen("unacked") == 1, "the running job's message was not acknowledged"
            with psycopg.connect(postgres_database) as conn:
                first_task = conn.execute("SELECT task_id FROM jobs_job").fetchone()[0]
            deployment.start_worker()
            assert deployment.watch(job_id, timeout=180)[-1] == ("done", N_ITEMS, N_ITEMS, "")
            # the dead worker's delivery comes back to the new worker, which acknowledges it
            # without doing anything
            deadline = time.monotonic() + 60
            while f"Task jobs.run_job[{first_task}] succeeded" not in deployment.worker_log():
                assert time.monotonic() < deadline, "the dead worker's message was never handed out again"
                time.sleep(0.1)
            # the worker logs a task's success before its late acknowledgement reaches Redis (and
            # the resumed run's own message is acknowledged as that run returns): wait for the
            # state, bounded, rather than assume the order
            while broker.hlen("unacked"):
                assert time.monotonic() < deadline, "a message stays unacknowledged after the job is done"
                time.sleep(0.1)
        finally:
            deployment.stop()
    with psycopg.connect(postgres_database) as conn:
        assert_every_item_parsed_once(conn)


def test_an_export_whose_worker_is_killed_completes_by_itself_with_one_whole_archive(
    tmp_path, redis_url, postgres_database
):
    exports = tmp_path / "exports"
    env = {
        "DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_EXPORT_DIR": str(exports),
        "NSM_EXPORT_BATCH_SIZE": "2", "NSM_JOB_BATCH_SIZE": "5", "NSM_VERIFIER_DEVICE": "cpu", **FAST_BEATS,
    }  # fmt: skip
    deployment = Deployment(tmp_path, env, postgres_row(postgres_database))
    model = str(build_tiny_nli(tmp_path / "nli", labels=("contradiction", "entailment", "neutral")))
    make_gold_run(deployment, tmp_path, N_GOLD)
    deployment.start_worker()
    try:
        # a model never run before: the export verifies as it goes (slow enough to be killed midway)
        job_id = queued(
            deployment.manage("export_corpus", "--round", "gold-run", "--model", model, "--background")
        )
        kill_worker_when(deployment, job_id, lambda row: row[1] >= 6)
        status, done, total, _ = deployment.row(job_id)
        assert status == "running" and 0 < done < total, "killed mid-export"
        assert any(p.name.startswith(".partial-") for p in exports.iterdir()), "killed while writing"
        stalled_within(deployment, job_id, 30)
        deployment.start_worker()
        assert deployment.watch(job_id, timeout=180)[-1] == ("done", N_GOLD, N_GOLD, ""), (
            deployment.worker_log()[-3000:]
        )
    finally:
        deployment.stop()
    with psycopg.connect(postgres_database) as conn:
        rows = conn.execute("SELECT job_id, filename, sha256, bytes, records FROM jobs_export").fetchall()
    assert len(rows) == 1, f"exactly one export: {rows}"
    job, filename, sha256, size, records = rows[0]
    assert (job, records) == (job_id, N_GOLD)
    assert sorted(p.name for p in exports.iterdir()) == [filename], "no partial or temporary file left"
    archive = exports / filename
    assert archive.stat().st_size == size
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == sha256
    with zipfile.ZipFile(archive) as zf:
        assert zf.testzip() is None, "every member of the archive reads back whole"
        assert len(zf.read("emoexpl.jsonl").decode().splitlines()) == N_GOLD
