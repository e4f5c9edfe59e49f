"""Verification and the EmoExpl export through a real Celery worker on Redis with PostgreSQL, the
way an admin drives them from the shell: a tiny NLI model on disk, gold from two imported
passes, a verification job, an export job; then a worker killed mid-export, which leaves no
archive, and the job resumed by the next worker, which completes (tests/integration/
test_worker_faults.py kills workers in more ways)."""

import json
import re
import signal
import time
import zipfile
from pathlib import Path

import jsonschema
import psycopg
import pytest

from nsmcore.tiny import build_tiny_nli
from tests.integration.deployment import Deployment, postgres_row, redis_connected

pytestmark = pytest.mark.integration
N_ITEMS = 60
ROOT = Path(__file__).resolve().parents[2]
SLOTS = {
    "experiencer": "i", "trigger": "someone-did-something", "agency": "i", "realization": "happened",
    "time_direction": "before-now", "want": "want", "evaluation": "feel-good", "eval_target": "self",
    "knowledge": "none", "others_know": "none", "body": "no", "intensity": "plain",
}  # fmt: skip


def write_corpus(tmp: Path) -> tuple[Path, Path]:
    items, annotations = tmp / "items.jsonl", tmp / "pass.jsonl"
    with items.open("w") as a, annotations.open("w") as b:
        for i in range(N_ITEMS):
            text = f"I was proud when I finished the marathon number {i} with my sister."
            a.write(json.dumps({"text_id": f"m-{i}", "emotion": "pride", "text": text}) + "\n")
            b.write(json.dumps({"text_id": f"m-{i}", **SLOTS}) + "\n")
    return items, annotations


def make_gold_run(deployment: Deployment, tmp_path: Path, size: int) -> None:
    """Migrate the deployment and make round gold-run as an admin does, with the commands: ``size``
    items drawn from the corpus and two silver passes over them."""
    items, annotations = write_corpus(tmp_path)
    deployment.migrate()
    deployment.manage("import_items", str(items), "--source", "it")
    deployment.manage("draw_item_set", "all", "--size", str(size), "--seed", "1")
    deployment.manage(
        "create_round", "gold-run", "--item-set", "all", "--text", "text", "--pass-kind", "silver"
    )
    for name in ("pass-a", "pass-b"):
        deployment.manage(
            "import_pass", str(annotations), "--round", "gold-run", "--annotator", name, "--source", "it"
        )


def queued(out: str) -> int:
    match = re.search(r"job #(\d+) queued", out)
    assert match, out
    return int(match.group(1))


def test_verification_and_export_through_the_worker_survive_a_kill(
    tmp_path,
    redis_url,
    postgres_database,
):
    exports = tmp_path / "exports"
    env = {
        "DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_EXPORT_DIR": str(exports),
        "NSM_EXPORT_BATCH_SIZE": "2", "NSM_JOB_BATCH_SIZE": "5", "NSM_VERIFIER_DEVICE": "cpu",
        "NSM_JOB_HEARTBEAT_SECONDS": "1", "NSM_JOB_STALL_SECONDS": "3",
    }  # fmt: skip
    deployment = Deployment(tmp_path, env, postgres_row(postgres_database))
    model = str(build_tiny_nli(tmp_path / "nli", labels=("contradiction", "entailment", "neutral")))
    other = str(build_tiny_nli(tmp_path / "nli-2", labels=("entailment", "neutral", "contradiction"), seed=1))
    make_gold_run(deployment, tmp_path, N_ITEMS)
    deployment.start_worker()
    try:
        verify = queued(deployment.manage("verify", "--round", "gold-run", "--model", model, "--background"))
        assert deployment.watch(verify)[-1] == ("done", N_ITEMS, N_ITEMS, "")
        export = queued(
            deployment.manage("export_corpus", "--round", "gold-run", "--model", model, "--background")
        )
        seen = deployment.watch(export)
        assert seen[-1] == ("done", N_ITEMS, N_ITEMS, ""), deployment.worker_log()[-2000:]

        # an export with a model never run before verifies as it goes (slower): kill it midway
        killed = queued(
            deployment.manage("export_corpus", "--round", "gold-run", "--model", other, "--background")
        )
        deadline = time.monotonic() + 120
        while deployment.row(killed)[1] < 6:
            assert time.monotonic() < deadline and deployment.row(killed)[0] in ("queued", "running")
            time.sleep(0.005)
        deployment.worker.send_signal(signal.SIGKILL)
        deployment.worker.wait()
    finally:
        deployment.stop()
    status, done, total, _ = deployment.row(killed)
    assert status == "running" and 0 < done < total, "killed mid-export"
    with psycopg.connect(postgres_database) as conn:
        rows = conn.execute(
            "SELECT job_id, filename, records, jsonl_sha256 FROM jobs_export ORDER BY id"
        ).fetchall()
        cached = conn.execute("SELECT count(*) FROM jobs_lineverification").fetchone()[0]
    assert [r[0] for r in rows] == [export], "no history row for the killed export"
    archives = sorted(p.name for p in exports.iterdir() if not p.name.startswith("."))
    assert archives == [rows[0][1]], "the killed export left no archive"

    # the archive of the completed export: every record valid, lines verified by the model
    schema = json.loads((ROOT / "docs" / "emoexpl" / "record.schema.json").read_text())
    with zipfile.ZipFile(exports / rows[0][1]) as zf:
        records = [json.loads(line) for line in zf.read("emoexpl.jsonl").decode().splitlines()]
        manifest = json.loads(zf.read("manifest.json"))
    assert len(records) == N_ITEMS == rows[0][2]
    for record in records:
        jsonschema.validate(record, schema)
        assert record["construals"][0]["lines"][0]["verifier_model"] == model
    assert manifest["files"]["emoexpl.jsonl"]["sha256"] == rows[0][3]

    # a new worker: its sweeper finds the killed job's heartbeat gone and resumes it; it completes
    deployment.start_worker()
    try:
        assert deployment.watch(killed)[-1] == ("done", N_ITEMS, N_ITEMS, "")
    finally:
        deployment.stop()
    assert not [p for p in exports.iterdir() if p.name.startswith(".partial-")], "the leftover is gone"
    with psycopg.connect(postgres_database) as conn:
        assert conn.execute("SELECT count(*) FROM jobs_export WHERE job_id = %s", (killed,)).fetchone() == (
            1,
        )
        assert conn.execute("SELECT count(*) FROM jobs_lineverification").fetchone()[0] > cached
    assert redis_connected(redis_url) in deployment.worker_log()


def test_an_export_sees_work_submitted_after_the_workers_last_job(tmp_path, redis_url, postgres_database):
    """The worker and the commands are separate processes: what one learns about a round's
    annotations (and caches) must not outlive a submission made by another."""
    exports = tmp_path / "exports"
    env = {"DATABASE_URL": postgres_database, "REDIS_URL": redis_url, "NSM_EXPORT_DIR": str(exports)}
    deployment = Deployment(tmp_path, env, postgres_row(postgres_database))
    items, annotations = write_corpus(tmp_path)
    first_part = tmp_path / "first-part.jsonl"
    first_part.write_text("".join(annotations.read_text().splitlines(keepends=True)[:40]))
    deployment.migrate()
    deployment.manage("import_items", str(items), "--source", "it")
    deployment.manage("draw_item_set", "all", "--size", str(N_ITEMS), "--seed", "1")
    deployment.manage("create_round", "later", "--item-set", "all", "--text", "text", "--pass-kind", "silver")
    deployment.manage(
        "import_pass", str(annotations), "--round", "later", "--annotator", "pass-a", "--source", "it"
    )
    deployment.manage(
        "import_pass", str(first_part), "--round", "later", "--annotator", "pass-b", "--source", "it"
    )
    deployment.start_worker()
    try:
        before = queued(deployment.manage("export_corpus", "--round", "later", "--no-verify", "--background"))
        assert deployment.watch(before)[-1] == ("done", 40, 40, ""), deployment.worker_log()[-2000:]
        # the rest of the second pass arrives; the same worker exports again
        deployment.manage(
            "import_pass", str(annotations), "--round", "later", "--annotator", "pass-b", "--source", "it"
        )
        after = queued(deployment.manage("export_corpus", "--round", "later", "--no-verify", "--background"))
        assert deployment.watch(after)[-1] == ("done", N_ITEMS, N_ITEMS, ""), deployment.worker_log()[-2000:]
    finally:
        deployment.stop()
    with psycopg.connect(postgres_database) as conn:
        assert conn.execute("SELECT records FROM jobs_export ORDER BY id").fetchall() == [(40,), (N_ITEMS,)]
