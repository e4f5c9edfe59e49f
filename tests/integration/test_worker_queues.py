"""Verification on a worker of its own (a GPU machine's), through Redis with PostgreSQL: the web
machine's worker, told to take the default queue alone, runs exports but leaves verification in
Redis; the GPU machine's worker, started with the deployment guide's own command line, runs it
(docs/deploy.md, Workers on other machines)."""

from __future__ import annotations

import pytest
import redis

from nsmcore.tiny import build_tiny_nli
from tests.integration.deployment import Deployment, postgres_row
from tests.integration.test_deploy_guide import guide_blocks
from tests.integration.test_export_worker import N_ITEMS, make_gold_run, queued

pytestmark = pytest.mark.integration


def test_verification_waits_for_a_worker_of_the_verify_queue(tmp_path, redis_url, postgres_database):
    exports = str(tmp_path / "exports")
    env = {
        "DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_EXPORT_DIR": exports,
        "NSM_VERIFIER_DEVICE": "cpu",
    }  # fmt: skip
    deployment = Deployment(tmp_path, env, postgres_row(postgres_database))
    model = str(build_tiny_nli(tmp_path / "nli", labels=("contradiction", "entailment", "neutral")))
    make_gold_run(deployment, tmp_path, N_ITEMS)
    broker = redis.Redis.from_url(redis_url)
    deployment.start_worker(queues="celery")
    try:
        verify = queued(deployment.manage("verify", "--round", "gold-run", "--model", model, "--background"))
        export = queued(
            deployment.manage("export_corpus", "--round", "gold-run", "--no-verify", "--background")
        )
        # the export, sent after the verification, is done: the worker is working, and passed it by
        assert deployment.watch(export)[-1] == ("done", N_ITEMS, N_ITEMS, ""), deployment.worker_log()[-2000:]
        assert deployment.row(verify)[0] == "queued"
        assert broker.llen("verify") == 1, "the verification waits in its queue"
    finally:
        deployment.stop()
    deployment.start_worker(shell=guide_blocks()["gpu-worker"])
    try:
        assert deployment.watch(verify)[-1] == ("done", N_ITEMS, N_ITEMS, ""), deployment.worker_log()[-2000:]
    finally:
        deployment.stop()
    assert broker.llen("verify") == 0
    assert "verify" in deployment.worker_log().split("[queues]")[1].split("[tasks]")[0]
