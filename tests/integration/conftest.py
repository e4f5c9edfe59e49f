"""Real services for integration tests. Outside CI a missing service skips with the reason; in CI
(CI=true) it fails, so an integration test can never silently not run there."""

import os
import socket
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest
import redis

from tests.integration.deployment import POSTGRES_ADMIN_URL


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


REDIS_SERVER = os.environ.get("NSM_TEST_REDIS_URL", "redis://127.0.0.1:6379")
CLAIM = "nsm-test:redis-db:{}"  # in database 0: which run holds database n


def redis_database_claim(server, run: str) -> int | None:
    """Claim the first free Redis database (1 to 15) for ``run``; None when all are taken. The
    claim expires by itself if the run is killed before it can give the database back."""
    for n in range(1, 16):
        if server.set(CLAIM.format(n), run, nx=True, ex=3 * 3600):
            return n
    return None


def redis_database_release(server, run: str, n: int) -> None:
    """Give database ``n`` back empty, if ``run`` holds it: what the run's workers left there
    (kombu's queue bindings) leaves with it."""
    if server.get(CLAIM.format(n)) == run.encode():
        with redis.Redis.from_url(f"{REDIS_SERVER}/{n}") as database:  # the server's (redis_server)
            database.flushdb()
        server.delete(CLAIM.format(n))


@pytest.fixture(scope="session")
def redis_server():
    require_service(REDIS_SERVER.replace("redis://", "tcp://"), "Redis")
    return redis.Redis.from_url(f"{REDIS_SERVER}/0")


@pytest.fixture(scope="session")
def redis_database(redis_server) -> Iterator[int]:
    """A Redis database of this run's own, claimed in database 0 for the run's length, so that
    two runs on one machine never flush each other's queues."""
    run = os.environ["NSM_TEST_RUN"]
    n = redis_database_claim(redis_server, run)
    if n is None:
        pytest.fail("Redis databases 1 to 15 are all claimed by other test runs (keys nsm-test:redis-db:*)")
    yield n
    redis_database_release(redis_server, run, n)


@pytest.fixture
def redis_url(redis_database):
    url = f"{REDIS_SERVER}/{redis_database}"
    redis.Redis.from_url(url).flushdb()  # the run's own database: each test starts it empty
    return url


@pytest.fixture
def postgres_database(postgres_admin_url):
    name = f"nsm_worker_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{postgres_admin_url.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
