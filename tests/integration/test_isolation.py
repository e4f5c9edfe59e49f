"""Two runs of the suite on one machine never share a database, a broker folder, a cache, an
export folder or a Redis database."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection

from tests.integration.conftest import REDIS_SERVER, redis_database_claim, redis_database_release

PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.db import connection
print(json.dumps({
    "run": settings.NSM_TEST_RUN,
    "database": connection.creation._get_test_db_name(),
    "broker": str(settings.NSM_BROKER_DIR),
    "cache": settings.NSM_CACHE_URL,
    "exports": str(settings.NSM_EXPORT_DIR),
    "staging": str(settings.NSM_IMPORT_STAGING_DIR),
    "run_dir": str(settings.NSM_TEST_RUN_DIR),
}))
"""


def places_of_another_run() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NSM_TEST_RUN", "NSM_TEST_CACHE_URL")}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, cwd=settings.BASE_DIR, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    places = json.loads(out.stdout)
    # the settings made its broker folder; nothing else will use it (nor its run's folder)
    shutil.rmtree(Path(places["run_dir"]).parent)
    return places


def test_each_run_has_its_own_database_broker_cache_and_export_folder():
    mine = {
        "run": settings.NSM_TEST_RUN,
        "database": connection.creation._get_test_db_name(),
        "broker": str(settings.NSM_BROKER_DIR),
        "cache": settings.NSM_CACHE_URL,
        "exports": str(settings.NSM_EXPORT_DIR),
        "staging": str(settings.NSM_IMPORT_STAGING_DIR),
    }
    other = places_of_another_run()
    assert other["run"] != mine["run"]
    for place in ("database", "broker", "cache", "exports", "staging"):
        assert other[place] != mine[place], place
        assert other["run"].replace("-", "_") in other[place].replace("-", "_"), place
    if connection.vendor == "sqlite":
        assert mine["database"].startswith(str(settings.NSM_TEST_RUN_DIR))


def test_a_run_started_from_a_worker_leaves_no_folder_behind():
    """The PostgreSQL re-run (tests/integration/test_postgres.py) is a run of its own started from
    a worker of this one, whose xdist name it inherits: its places still go when it ends."""
    run = f"from-a-worker-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if k != "NSM_TEST_CACHE_URL"}
    env |= {"NSM_TEST_RUN": run, "PYTEST_XDIST_WORKER": "gw7"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
    out = subprocess.run(
        [*command, "tests/nsmcore/test_space.py"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-2000:]
    assert not (settings.NSM_TEST_RUN_DIR.parent.parent / run).exists()


def test_two_runs_claim_different_redis_databases_and_give_them_back(redis_server):
    first = redis_database_claim(redis_server, "run-a")
    second = redis_database_claim(redis_server, "run-b")
    try:
        assert first is not None and second is not None and first != second
        redis_database_release(redis_server, "run-b", first)  # not b's to give back
        assert redis_server.get(f"nsm-test:redis-db:{first}") == b"run-a"
    finally:
        redis_database_release(redis_server, "run-a", first)
        redis_database_release(redis_server, "run-b", second)
    assert redis_server.get(f"nsm-test:redis-db:{first}") is None
    assert redis_server.get(f"nsm-test:redis-db:{second}") is None


def test_a_run_gives_its_redis_database_back_empty(redis_server):
    """What a run's workers left there (kombu's queue bindings) leaves with it."""
    n = redis_database_claim(redis_server, "run-c")
    assert n is not None
    with redis.Redis.from_url(f"{REDIS_SERVER}/{n}") as mine:
        try:
            mine.sadd("_kombu.binding.celery", "celery")
        finally:
            redis_database_release(redis_server, "run-c", n)
        assert mine.dbsize() == 0 and redis_server.get(f"nsm-test:redis-db:{n}") is None
