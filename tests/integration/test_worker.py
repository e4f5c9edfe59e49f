"""Prefill jobs through a real Celery worker process: on the embedded filesystem broker with
SQLite (what `make run` uses, no server needed), and on Redis with PostgreSQL."""

import sqlite3
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from tests.integration.deployment import Deployment, postgres_row, redis_connected, sqlite_row, write_items

pytestmark = pytest.mark.integration
N_ITEMS = 1200


def run_prefill_through_the_worker(deployment: Deployment, tmp_path) -> list[tuple]:
    deployment.migrate()
    deployment.manage("import_items", str(write_items(tmp_path / "items.jsonl", N_ITEMS)), "--source", "it")
    deployment.manage("draw_item_set", "all", "--size", str(N_ITEMS), "--seed", "1")
    # queued before any worker runs, and watched from then on: a worker already waiting ran the
    # 1,200 items before the queuing command had exited, and the watch saw only the end
    job_id = deployment.queue_prefill("all")
    with ThreadPoolExecutor(1) as pool:
        watching = pool.submit(deployment.watch, job_id)
        try:
            deployment.start_worker()
            seen = watching.result()
        finally:
            deployment.stop()
    status, done, total, error = seen[-1]
    assert (status, done, total, error) == ("done", N_ITEMS, N_ITEMS, ""), deployment.worker_log()[-2000:]
    dones = [row[1] for row in seen]
    assert dones == sorted(dones), "progress never goes back"
    between = {d for d in dones if 0 < d < N_ITEMS}
    assert len(between) >= 2, f"the progress should be seen moving, saw {dones}"
    assert "running" in {row[0] for row in seen}
    return seen


def test_the_embedded_broker_runs_a_prefill_job_without_any_server(tmp_path):
    db = tmp_path / "app.sqlite3"
    deployment = Deployment(
        tmp_path, {"DATABASE_URL": f"sqlite:///{db}", "NSM_JOB_BATCH_SIZE": "10"}, sqlite_row(db)
    )
    run_prefill_through_the_worker(deployment, tmp_path)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM annotator_parserprediction").fetchone() == (N_ITEMS,)
    # the embedded broker: kombu's filesystem transport as config.broker writes it
    assert "Connected to config.broker:Transport://" in deployment.worker_log()


def test_a_worker_on_redis_runs_a_prefill_job_on_postgresql(tmp_path, redis_url, postgres_database):
    deployment = Deployment(
        tmp_path,
        {"DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_JOB_BATCH_SIZE": "10"},
        postgres_row(postgres_database),
    )
    run_prefill_through_the_worker(deployment, tmp_path)
    with psycopg.connect(postgres_database) as conn:
        assert conn.execute("SELECT count(*) FROM annotator_parserprediction").fetchone() == (N_ITEMS,)
    assert redis_connected(redis_url) in deployment.worker_log()
