"""A deployment of the app in temporary folders, driven the way a user drives it: manage.py
commands and a real Celery worker process, with the database read back directly."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import psycopg
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]

OPENINGS = ["I felt it when", "It happened that", "Last year", "Yesterday", "When I was young"]
EVENTS = [
    "my sister told me she was moving abroad",
    "I passed the driving test on my first try",
    "someone stole my bike from the station",
    "the doctor said the results were fine",
    "I forgot my best friend's birthday",
    "we all watched the storm break the fence",
]


def write_items(path: Path, n: int) -> Path:
    with path.open("w") as out:
        for i in range(n):
            text = f"{OPENINGS[i % len(OPENINGS)]} {EVENTS[i % len(EVENTS)]} (story {i})."
            out.write(json.dumps({"text_id": f"it-{i}", "emotion": "joy", "text": text}) + "\n")
    return path


class Deployment:
    def __init__(self, tmp: Path, env: dict[str, str], row: Callable[[int], tuple]):
        self.tmp = tmp
        keep = {
            k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "NSM_", "REDIS_", "CELERY_"))
        }
        self.env = (
            keep
            | {
                "DJANGO_SETTINGS_MODULE": "config.settings.dev",
                "DEBUG": "0",
                "NSM_BROKER_DIR": str(tmp / "broker"),
                "NSM_CACHE_URL": f"file://{tmp / 'cache'}",
                "PYTHONPATH": str(ROOT),
            }
            | env
        )
        self.row = row  # job id -> (status, done, total, error)
        self.worker: subprocess.Popen | None = None

    def migrate(self) -> None:
        """``manage.py migrate``, as a user runs it, once per test run and database engine: the
        database it made is kept as a template, and a later deployment, in any of the run's
        processes, starts from a copy (a second migrate, 3 s of CPU here and the server's work
        besides, would test nothing new). The test of a fresh PostgreSQL database and the
        deployment guide still run it on an empty one."""
        url = self.env.get("DATABASE_URL", "")
        if url.startswith(("postgres://", "postgresql://")):
            self._migrate_postgres(url)
            return
        if not url.startswith("sqlite:///"):
            self.manage("migrate", "--noinput")
            return
        target = Path(url.removeprefix("sqlite:///"))
        with run_lock("migrated-sqlite") as shared:
            template = shared / "migrated.sqlite3"
            if not template.exists():
                self.manage("migrate", "--noinput")
                copy_sqlite(target, template.with_suffix(".partial"))
                template.with_suffix(".partial").replace(template)
                return
        copy_sqlite(template, target)  # made once, never written again: no lock needed to read it

    def _migrate_postgres(self, url: str) -> None:
        """The same on PostgreSQL: the run's first deployment migrates its (empty) database and
        copies it as the run's template; a later one makes its database again from the template
        (under the lock too: a copy needs its source free of other sessions)."""
        base, name = url.rsplit("/", 1)
        with (
            run_lock("migrated-postgres") as shared,
            psycopg.connect(f"{base}/postgres", autocommit=True) as admin,
        ):
            marker = shared / POSTGRES_TEMPLATE_MARKER
            template = postgres_template_name()
            if marker.exists():
                admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
                return
            self.manage("migrate", "--noinput")
            # a copy needs its source free: the migrate's own session may still be ending
            deadline = time.monotonic() + 30
            while admin.execute("SELECT 1 FROM pg_stat_activity WHERE datname = %s", (name,)).fetchone():
                assert time.monotonic() < deadline, f"a session stayed on {name} after migrate"
                time.sleep(0.05)
            admin.execute(f'CREATE DATABASE "{template}" TEMPLATE "{name}"')
            marker.write_text(template)

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True
        )
        assert result.returncode == 0, f"manage.py {' '.join(args)}: {result.stderr[-2000:]}"
        return result.stdout

    def start_worker(self, queues: str = "", *, shell: str = "") -> None:
        """A worker of its own; ``queues``: only those (-Q), as a GPU machine's worker; ``shell``:
        instead, this shell command line as written (a block of the deployment guide), run with
        this interpreter's bin folder first on PATH."""
        log = (self.tmp / "worker.log").open("w")
        env = self.env
        if shell:
            command = ["bash", "-c", f"exec {shell.strip()}"]
            env = {**env, "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', os.environ['PATH'])}"}
        else:
            command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "threads"]
            command += [
                "--concurrency",
                "2",
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                os.environ.get("NSM_TEST_WORKER_LOGLEVEL", "INFO"),
            ]
            command += ["--hostname", f"it-{os.getpid()}@%h"] + (["--queues", queues] if queues else [])
        self.worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while "ready." not in self.worker_log():
            assert self.worker.poll() is None, f"the worker exited:\n{self.worker_log()[-3000:]}"
            if time.monotonic() > deadline:
                self.worker.kill()  # not left behind to take another run's jobs from the broker
                self.worker.wait()
                raise AssertionError(f"the worker did not start:\n{self.worker_log()[-3000:]}")
            time.sleep(0.1)

    def worker_log(self) -> str:
        path = self.tmp / "worker.log"
        return path.read_text() if path.exists() else ""

    def stop(self) -> None:
        close = getattr(self.row, "close", None)
        if close:  # the connection the job rows are read on; the next read opens another
            close()
        if self.worker and self.worker.poll() is None:
            self.worker.send_signal(signal.SIGTERM)
            try:
                self.worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.worker.kill()

    def queue_prefill(self, item_set: str) -> int:
        out = self.manage("prefill", "--item-set", item_set, "--background")
        match = re.search(r"job #(\d+) queued", out)
        assert match, out
        return int(match.group(1))

    def watch(self, job_id: int, timeout: float = 120) -> list[tuple[str, int, int, str]]:
        """Every distinct (status, done, total, error) seen until the job ends."""
        seen: list[tuple[str, int, int, str]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            row = tuple(self.row(job_id))
            if not seen or seen[-1] != row:
                seen.append(row)
            if row[0] in ("done", "failed", "cancelled"):
                return seen
            assert self.worker is None or self.worker.poll() is None, self.worker_log()[-3000:]
            time.sleep(0.01)
        raise AssertionError(f"job {job_id} did not end; seen {seen[-5:]}\n{self.worker_log()[-3000:]}")


POSTGRES_ADMIN_URL = os.environ.get("NSM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
# In the run's shared folder once the run's PostgreSQL template exists: the run's last process
# drops the template (tests/conftest.py).
POSTGRES_TEMPLATE_MARKER = "postgres-template"


@contextmanager
def run_lock(name: str) -> Iterator[Path]:
    """The run's shared folder, held by one of the run's processes (its pytest-xdist workers) at a
    time under the lock ``name``; a process that dies lets go of it."""
    shared = settings.NSM_TEST_RUN_DIR.parent / "shared"
    shared.mkdir(parents=True, exist_ok=True)
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield shared  # closing the file lets go


def postgres_template_name() -> str:
    """The run's migrated template database."""
    return f"nsm_migrated_{settings.NSM_TEST_RUN}".replace("-", "_").lower()


def drop_run_postgres_template(shared: Path) -> None:
    """When the run ends, if one of its processes made it."""
    marker = shared / POSTGRES_TEMPLATE_MARKER
    if marker.exists():
        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{marker.read_text().strip()}" WITH (FORCE)')
        marker.unlink()


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database, its write-ahead log included (SQLite's backup)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def sqlite_row(path: Path) -> Callable[[int], tuple]:
    def row(job_id: int) -> tuple:
        with sqlite3.connect(path, timeout=10) as conn:
            return conn.execute(
                "SELECT status, done, total, error FROM jobs_job WHERE id = ?", (job_id,)
            ).fetchone()

    return row


class PostgresRow:
    """A job's (status, done, total, error), read on one connection kept between reads (in
    autocommit: each read sees the worker's last commit). ``watch`` reads every 10 ms, and a new
    connection for each read cost about 2 ms of CPU (a PostgreSQL backend started and stopped)
    and 6 ms of waiting. After the server went away (a test stops PostgreSQL) the next read
    connects again."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: psycopg.Connection | None = None

    def __call__(self, job_id: int) -> tuple:
        try:
            return self._read(job_id)
        except psycopg.OperationalError:
            self.close()  # the server went away, and may be back: once more, on a new connection
            return self._read(job_id)

    def _read(self, job_id: int) -> tuple:
        if self.conn is None or self.conn.closed:
            self.conn = psycopg.connect(self.url, autocommit=True)
        return self.conn.execute(
            "SELECT status, done, total, error FROM jobs_job WHERE id = %s", (job_id,)
        ).fetchone()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def postgres_row(url: str) -> PostgresRow:
    return PostgresRow(url)


def redis_connected(redis_url: str) -> str:
    """The line a Celery worker logs once it reaches the Redis database at ``redis_url`` (its
    password masked), wherever that server is (NSM_TEST_REDIS_URL)."""
    from urllib.parse import urlsplit

    parts = urlsplit(redis_url)
    return f"Connected to redis://:**@{parts.hostname}:{parts.port or 6379}{parts.path or '/0'}"
