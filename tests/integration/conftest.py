"""Real services for integration tests. Outside CI a missing service skips with the reason; in CI
(CI=true) it fails, so an integration test can never silently not run there."""

import os
import socket
import uuid
from urllib.parse import urlsplit

import psycopg
import pytest

POSTGRES_ADMIN_URL = os.environ.get("NSM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def _answers(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 5432), timeout=2):
            return True
    except OSError:
        return False


def require_service(url: str, what: str) -> None:
    if _answers(url):
        return
    message = f"{what} does not answer at {url}; start it (see .ci/run) or set NSM_TEST_POSTGRES_URL"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(reason=message)


@pytest.fixture
def postgres_admin_url() -> str:
    require_service(POSTGRES_ADMIN_URL, "PostgreSQL")
    return POSTGRES_ADMIN_URL


@pytest.fixture
def redis_url():
    url = "redis://127.0.0.1:6379/13"
    require_service(url.replace("redis://", "tcp://"), "Redis")
    import redis

    redis.Redis.from_url(url).flushdb()  # database 13 belongs to these tests
    return url


@pytest.fixture
def postgres_database(postgres_admin_url):
    name = f"nsm_worker_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{postgres_admin_url.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
