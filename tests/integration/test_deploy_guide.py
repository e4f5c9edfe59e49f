"""The deployment guide, followed: every shell block of docs/deploy.md marked ```sh title="NAME"```
is run here as written, in bash, on a real PostgreSQL and Redis, so that the guide and what works
cannot drift apart. Between the blocks the test does what a person does in a browser or with the
API (log in, annotate) and checks the outcome in the database and over HTTP.

Two commands of the guide are left out on purpose, by shell functions the blocks see: `git pull`
(it would change the checkout under test) and `pip install -r requirements.txt` (the test runs in
the checkout's own environment, which must not be changed by a test). Everything else runs."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import psycopg
import pytest

from tests.factories import PRED
from tests.integration.deployment import ROOT, write_items

pytestmark = pytest.mark.integration

GUIDE = ROOT / "docs" / "deploy.md"
BLOCK = re.compile(r'^```sh title="([^"]+)"\n(.*?)^```$', re.MULTILINE | re.DOTALL)
PRELUDE = """set -euo pipefail
git() {
  if [ "${1:-}" = pull ]; then echo "(guide test: git $* left out: the checkout under test stays)"; return; fi
  command git "$@"
}
pip() {
  if [ "${1:-}" = install ]; then echo "(guide test: pip $* left out: the checkout's environment)"; return; fi
  command pip "$@"
}
"""
SECRET = "g8-Lr3wS0nA5qM9xO4uZ7cI2dG6kE1hT-bF3vJ0pQ5lN8mC4wY2aR7"  # 50+ characters, many distinct
# "gpu-worker" is followed by tests/integration/test_worker_queues.py
TITLES = ["postgres", "redis", "release", "admin", "serve", "gpu-worker", "backup", "restore", "upgrade"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def guide_blocks() -> dict[str, str]:
    blocks: dict[str, str] = {}
    for title, body in BLOCK.findall(GUIDE.read_text()):
        assert title not in blocks, f"two blocks titled {title!r} in docs/deploy.md"
        blocks[title] = body
    return blocks


def test_the_guide_has_every_step_this_test_follows():
    """Renaming or dropping a titled block must fail here, not skip a step quietly."""
    assert list(guide_blocks()) == TITLES


def run_block(title: str, env: dict[str, str], stdin: str = "") -> str:
    result = subprocess.run(
        ["bash", "-c", PRELUDE + guide_blocks()[title]],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"block {title!r} failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


class Served:
    """The guide's "serve" block in the background, in a process group of its own."""

    def __init__(self, env: dict[str, str], log: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = log
        self.process = subprocess.Popen(
            ["bash", "-c", PRELUDE + guide_blocks()["serve"]],
            cwd=ROOT,
            env={**env, "NSM_BIND": f"127.0.0.1:{self.port}"},
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, f"serve exited:\n{self.log()[-3000:]}"
            assert time.monotonic() < deadline, f"serve did not start:\n{self.log()[-3000:]}"
            if "ready." in self.log():  # the job worker
                try:
                    urllib.request.urlopen(f"{self.base}/accounts/login/", timeout=2)
                    return
                except OSError:
                    pass
            time.sleep(0.2)

    def stop(self) -> int:
        """SIGTERM, as systemd stops the unit; the exit status of serve."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            raise AssertionError(f"serve did not stop on SIGTERM:\n{self.log()[-3000:]}") from None


class Browser:
    """Cookies and the CSRF token as a browser keeps them."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken")

    def open(self, path: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, data=data, headers=headers or {})
        try:
            with self.opener.open(request, timeout=20) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def log_in(self, username: str, password: str) -> None:
        status, page = self.open("/accounts/login/")
        assert status == 200
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        form = {"username": username, "password": password, "csrfmiddlewaretoken": token}
        status, page = self.open("/accounts/login/", urllib.parse.urlencode(form).encode())
        assert status == 200 and b'name="password"' not in page, page[:2000]  # the home page, not the form

    def api(self, path: str, body: dict | None = None) -> tuple[int, object]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if body is not None:
            headers |= {"Content-Type": "application/json", "X-CSRFToken": self.csrf()}
        status, payload = self.open(path, data, headers)
        return status, json.loads(payload)


def scalar(url: str, sql: str, *params) -> object:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchone()[0]


@pytest.fixture
def names(postgres_admin_url):
    """A role and two databases of this test's own on the shared server, gone afterwards."""
    tag = uuid.uuid4().hex[:10]
    made = {"role": f"nsm_guide_{tag}", "db": f"nsm_guide_{tag}", "restored": f"nsm_guide_{tag}_restored"}
    yield made
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        for db in (made["db"], made["restored"]):
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'DROP ROLE IF EXISTS "{made["role"]}"')


def database_url(admin_url: str, role: str, password: str, db: str) -> str:
    server = urllib.parse.urlsplit(admin_url)
    return f"postgres://{role}:{password}@{server.hostname}:{server.port or 5432}/{db}"


def test_the_deployment_guide_step_by_step(tmp_path, postgres_admin_url, redis_url, names):
    password = uuid.uuid4().hex
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "NSM_", "REDIS_", "DATABASE_"))
    }
    env = keep | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # `python` is the checkout's
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "PG_ADMIN_URL": postgres_admin_url,
        "NSM_DB": names["db"],
        "NSM_DB_USER": names["role"],
        "NSM_DB_PASSWORD": password,
        "DATABASE_URL": database_url(postgres_admin_url, names["role"], password, names["db"]),
        "REDIS_URL": redis_url,
        "NSM_CACHE_URL": f"file://{tmp_path / 'cache'}",
        "NSM_EXPORT_DIR": str(tmp_path / "srv" / "exports"),
        "NSM_MODEL_DIR": str(tmp_path / "srv" / "models"),
        "NSM_STATIC_ROOT": str(tmp_path / "srv" / "static"),
        "NSM_IMPORT_STAGING_DIR": str(tmp_path / "srv" / "staging"),
        "BACKUP_DIR": str(tmp_path / "backups"),  # not made: the backup block makes it
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "127.0.0.1",
        # plain HTTP on loopback: no TLS proxy in front (the guide's table: local testing only)
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "NSM_WEB_WORKERS": "2",
        "NSM_WORKER_CONCURRENCY": "1",
    }
    admin_password = "correct horse battery staple"  # what the person types at the admin block

    # Set-up: the database, Redis, the release, the first admin.
    run_block("postgres", env)
    assert "PONG" in run_block("redis", env)
    assert "No migrations to apply" not in run_block("release", env)  # the database was new
    assert Path(env["NSM_EXPORT_DIR"]).is_dir() and Path(env["NSM_MODEL_DIR"]).is_dir()
    run_block("admin", env, stdin=f"{admin_password}\n")
    db = env["DATABASE_URL"]
    assert scalar(db, "SELECT is_staff FROM auth_user WHERE username = %s", "admin") is True
    # The role owns its database and nothing more: the app ran as it, not as the superuser.
    assert (
        scalar(db, "SELECT tableowner FROM pg_tables WHERE tablename = 'annotator_annotation'")
        == names["role"]
    )

    # A little work: items, an item set and a round from the shell; the annotation through the
    # API of the running server, logged in through the login page.
    items = write_items(tmp_path / "items.jsonl", 6)
    manage = [sys.executable, "manage.py"]
    for args in (
        ["import_items", str(items)],
        ["draw_item_set", "guide", "--seed", "1", "--size", "6"],
        ["create_round", "guide", "--item-set", "guide", "--annotators", "admin", "--per-item", "1"],
    ):
        done = subprocess.run(manage + args, cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    server = Served(env, tmp_path / "serve-1.log")
    try:
        server.wait_ready()
        browser = Browser(server.base)
        browser.log_in("admin", admin_password)
        status, mine = browser.api("/api/assignments/?round=guide")
        assert status == 200 and mine["count"] == 6
        first = mine["results"][0]["id"]
        body = {**PRED, "notes": "saved before the backup", "base_version": 0}
        status, saved = browser.api(f"/api/assignments/{first}/annotation/", body)
        assert status == 200 and saved["version"] == 1, saved
        status, stale = browser.api(f"/api/assignments/{first}/annotation/", body)  # the same base again
        assert status == 409, stale
        manifest = json.loads((Path(env["NSM_STATIC_ROOT"]) / "staticfiles.json").read_text())
        assert browser.open(f"/static/{manifest['paths']['css/app.css']}")[0] == 200

        # The backup, taken while the server runs.
        (Path(env["NSM_EXPORT_DIR"]) / "published.zip").write_bytes(b"an archive someone cites")
        run_block("backup", env)
    finally:
        assert server.stop() == 0, server.log()[-3000:]
    assert (tmp_path / "backups" / "nsm.dump").stat().st_size > 0

    # The restore, into a new database, with the files gone in between; then serve from it.
    (Path(env["NSM_EXPORT_DIR"]) / "published.zip").unlink()
    restored = env | {
        "NSM_DB": names["restored"],
        "DATABASE_URL": database_url(postgres_admin_url, names["role"], password, names["restored"]),
    }
    assert "No migrations to apply" in run_block("restore", restored)
    assert (Path(env["NSM_EXPORT_DIR"]) / "published.zip").read_bytes() == b"an archive someone cites"
    server = Served(restored, tmp_path / "serve-2.log")
    try:
        server.wait_ready()
        browser = Browser(server.base)
        browser.log_in("admin", admin_password)  # the users came back with their passwords
        status, history = browser.api(f"/api/assignments/{first}/history/")
        assert status == 200 and [(r["version"], r["notes"]) for r in history] == [
            (1, "saved before the backup")
        ]
        status, mine = browser.api("/api/assignments/?round=guide&status=done")
        assert status == 200 and [a["id"] for a in mine["results"]] == [first]
    finally:
        assert server.stop() == 0, server.log()[-3000:]

    # An upgrade, twice, with a job queued while the server is down: the new worker takes it.
    queued = subprocess.run(
        [*manage, "prefill", "--item-set", "guide", "--background"],
        cwd=ROOT,
        env=restored,
        capture_output=True,
        text=True,
    )
    assert queued.returncode == 0, queued.stderr
    job = int(re.search(r"job #(\d+) queued", queued.stdout).group(1))
    for _ in range(2):
        out = run_block("upgrade", restored)
        assert "No migrations to apply" in out and "left out" in out
    restored_db = restored["DATABASE_URL"]
    assert scalar(restored_db, "SELECT status FROM jobs_job WHERE id = %s", job) == "queued"
    server = Served(restored, tmp_path / "serve-3.log")
    try:
        server.wait_ready()
        deadline = time.monotonic() + 120
        while (status := scalar(restored_db, "SELECT status FROM jobs_job WHERE id = %s", job)) != "done":
            assert status in ("queued", "running"), f"job {job} is {status}:\n{server.log()[-3000:]}"
            assert time.monotonic() < deadline, f"job {job} still {status}:\n{server.log()[-3000:]}"
            time.sleep(0.2)
        browser = Browser(server.base)
        browser.log_in("admin", admin_password)
        status, history = browser.api(f"/api/assignments/{first}/history/")
        assert status == 200 and len(history) == 1  # the annotation outlived both upgrades
    finally:
        assert server.stop() == 0, server.log()[-3000:]
    assert scalar(restored_db, "SELECT count(*) FROM annotator_parserprediction") == 6  # the job's work
