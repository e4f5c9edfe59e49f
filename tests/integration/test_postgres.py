"""The app on a real PostgreSQL server, selected through DATABASE_URL as a user would."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _env(database_url: str) -> dict[str, str]:
    # NSM_TEST_RUN too: a suite run from this one is a run of its own, with its own places (it
    # would otherwise remove this run's database and folders when it ends)
    drop = ("DJANGO_SETTINGS_MODULE", "NSM_TEST_RUN", "NSM_TEST_CACHE_URL")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return env | {"DATABASE_URL": database_url, "DEBUG": "1", "PYTHONPATH": str(ROOT)}


@pytest.fixture
def fresh_database(postgres_admin_url):
    name = f"nsm_it_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = postgres_admin_url.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_migrate_seed_and_log_in_on_a_fresh_postgresql_database(fresh_database):
    env = _env(fresh_database)
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "--noinput"], ["seed_demo"]):
        result = subprocess.run(manage + command, cwd=ROOT, env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    probe = (
        "import django; django.setup()\n"
        "from django.db import connection; from django.test import Client\n"
        "c = Client()\n"
        "r = c.post('/accounts/login/', {'username': 'admin', 'password': 'admin-demo'})\n"
        "assert r.status_code == 302, r.status_code\n"
        "print(connection.vendor, c.get('/').status_code, c.get('/rules/').status_code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=env | {"DJANGO_SETTINGS_MODULE": "config.settings.dev", "ALLOWED_HOSTS": "testserver"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["postgresql", "200", "200"]


# tests/app's modules that query the database through the app. The rest check the code, the
# settings or processes of their own (layers, docs, the environment, requirements, the schema, the
# date format, warm-up), the same on any database: run twice they cost this test a third of its time.
APP_TESTS_THAT_READ_THE_DATABASE = [
    f"tests/app/{name}.py"
    for name in (
        "test_api_errors", "test_database", "test_error_pages", "test_get_writes_nothing", "test_huge_ids",
        "test_json_limits", "test_links", "test_pages", "test_schema_says_what_views_accept",
        "test_seed_demo", "test_unicode_digits",
    )
]  # fmt: skip


APP_TESTS_THE_SAME_ON_ANY_DATABASE = [
    f"tests/app/{name}.py"
    for name in (
        "test_api_docs", "test_benchmark_runner", "test_broker", "test_content_security_policy", "test_env",
        "test_every_string_marked", "test_german", "test_layers", "test_load_client", "test_log",
        "test_one_date_format", "test_process_imports", "test_raw_sql", "test_requirements", "test_schema",
        "test_warm_start",
    )
]  # fmt: skip


def test_each_app_test_module_is_placed_on_one_side():
    """A new module in tests/app must be placed on one side: none leaves the PostgreSQL run quietly."""
    modules = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "app").glob("test_*.py"))
    assert sorted(APP_TESTS_THAT_READ_THE_DATABASE + APP_TESTS_THE_SAME_ON_ANY_DATABASE) == modules


def test_the_app_suites_pass_on_postgresql(postgres_admin_url):
    base = postgres_admin_url.rsplit("/", 1)[0]
    # pytest-django creates and drops test_<name> itself.
    env = _env(f"{base}/nsm_suite_{os.getpid()}")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *APP_TESTS_THAT_READ_THE_DATABASE,
            "tests/annotator",
            "tests/jobs",
            "tests/predictions",
            "tests/adjudication",
            "tests/discussion",  # the partial unread index, the length check constraint
            "tests/verification",
            "tests/exports",  # its raw SQL (exports/queries.py) above all
            "tests/profiles",
            "tests/learning",  # bulk reorders of assignments, select_for_update
            "tests/webhooks",  # deliveries claimed by conditional updates
            "tests/quality",  # control inserts, the sweep's conditional moves under select_for_update
            "-q",
            "-p",
            "no:cacheprovider",
            # both cores: this is the suite's longest test, and the other worker is idle by its end
            "-n",
            "2",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
