"""The production server as it is deployed: `manage.py serve` with the production settings (DEBUG
off, whitenoise, gunicorn and a Celery worker), plain HTTP allowed by SECURE_SSL_REDIRECT=0, on a
free port; and `manage.py runapp`, which must not leave its worker behind either."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.integration.deployment import ROOT, Deployment, sqlite_row

pytestmark = pytest.mark.integration

SECRET = "x7-Kq2vR9mZ4pL8wN3tY6bH1cF5jD0gS-aE2uI9oP4kM7nB3vC8xZ1"  # 50+ characters, many distinct


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def prod(tmp_path) -> Deployment:
    db = tmp_path / "app.sqlite3"
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "DATABASE_URL": f"sqlite:///{db}",
        "NSM_STATIC_ROOT": str(tmp_path / "static"),
    }
    deployment = Deployment(tmp_path, env, sqlite_row(db))
    deployment.migrate()
    return deployment


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class Server:
    """A `manage.py serve` or `runapp` process, its output in a file, its processes by pid."""

    def __init__(self, deployment: Deployment, *args: str):
        self.log_path = deployment.tmp / "server.log"
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=deployment.env,
            stdout=self.log_path.open("w"),
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_for(self, url: str, ready: str, timeout: float = 60) -> None:
        """Until the page answers and the worker's log says `ready`."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, f"the server exited:\n{self.log()[-3000:]}"
            assert time.monotonic() < deadline, f"the server did not start:\n{self.log()[-3000:]}"
            if ready in self.log():
                try:
                    urllib.request.urlopen(url, timeout=2)
                    return
                except urllib.error.HTTPError:
                    return
                except OSError:
                    pass
            time.sleep(0.2)

    def children(self) -> list[psutil.Process]:
        self.seen = psutil.Process(self.process.pid).children(recursive=True)
        return self.seen

    def stop(self) -> None:
        """Whatever the test asserted: no process of it outlives the test."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for child in getattr(self, "seen", []):
            if child.is_running():
                child.kill()


def cmdline(process: psutil.Process) -> str:
    """The command line, or "" for a process that has just ended (a short-lived helper)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def cmdlines(processes: list[psutil.Process]) -> list[str]:
    return [cmdline(p) for p in processes]


def assert_all_gone(processes: list[psutil.Process]) -> None:
    _, alive = psutil.wait_procs(processes, timeout=15)
    assert not alive, f"left running: {cmdlines(alive)}"


def test_serve_answers_pages_and_static_files_with_debug_off_and_sigterm_stops_both(prod):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = Server(prod, "serve", "--bind", f"127.0.0.1:{port}", "--workers", "2", "--concurrency", "1")
    try:
        server.wait_for(f"{base}/accounts/login/", ready="ready.")

        status, headers, body = get(f"{base}/accounts/login/")
        assert status == 200 and b'name="password"' in body
        assert "Strict-Transport-Security" not in headers  # a plain-HTTP request gets no HSTS
        # behind the TLS proxy: X-Forwarded-Proto makes the request secure, so HSTS is sent
        status, headers, _ = get(f"{base}/accounts/login/", {"X-Forwarded-Proto": "https"})
        assert status == 200
        assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"

        manifest = json.loads((prod.tmp / "static" / "staticfiles.json").read_text())
        hashed = manifest["paths"]["css/app.css"]
        assert hashed != "css/app.css"
        status, headers, body = get(f"{base}/static/{hashed}")
        assert status == 200
        assert body == (ROOT / "static" / "css" / "app.css").read_bytes()
        assert "max-age=315360000" in headers["Cache-Control"] and "immutable" in headers["Cache-Control"]

        # the API answers JSON, also to a browser: no browsable API in production
        browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        status, headers, body = get(f"{base}/api/items/", {"Accept": browser})
        assert status == 401 and headers["Content-Type"] == "application/json", (status, headers)
        status, headers, _ = get(f"{base}/accounts/login/")
        assert "script-src 'self'" in headers["Content-Security-Policy"]

        status, _, body = get(f"{base}/no-such-page/")
        assert status == 404
        assert b"<h1>Not found</h1>" in body  # templates/404.html, inside the site's layout
        assert f"/static/{hashed}".encode() in body  # the layout links the hashed stylesheet
        assert b"Traceback" not in body and b"DEBUG" not in body

        children = server.children()
        lines = cmdlines(children)
        # the command's process became a bare supervisor (no Django apps held while it runs)
        assert "from server.children import main" in cmdline(psutil.Process(server.process.pid))
        assert sum("gunicorn" in line for line in lines) == 3, lines  # the master and two workers
        assert sum("celery" in line for line in lines) == 1, lines
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 0, server.log()[-3000:]
        assert_all_gone(children)
        assert "SIGTERM received" in server.log()
    finally:
        server.stop()


def test_when_gunicorn_dies_serve_stops_the_worker_and_exits_non_zero(prod):
    """The web server is not restarted (its own master restarts its workers): a dead master means
    something is wrong with the deployment, and the process manager must hear of it. A dead job
    worker is started again instead (tests/integration/test_site_faults.py)."""
    port = free_port()
    server = Server(prod, "serve", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--no-collectstatic")
    try:
        server.wait_for(f"http://127.0.0.1:{port}/accounts/login/", ready="ready.")
        children = server.children()
        (master,) = [p for p in children if "gunicorn" in cmdline(p) and p.ppid() == server.process.pid]
        worker = [p for p in children if "celery" in cmdline(p)]
        master.kill()
        assert server.process.wait(timeout=30) == 1, server.log()[-3000:]
        assert worker
        assert_all_gone(worker)
        assert "gunicorn exited with status -9; stopping the others" in server.log()
    finally:
        server.stop()


def test_sigterm_to_runapp_stops_its_worker(tmp_path):
    db = tmp_path / "app.sqlite3"
    deployment = Deployment(tmp_path, {"DATABASE_URL": f"sqlite:///{db}"}, sqlite_row(db))
    deployment.migrate()
    port = free_port()
    server = Server(deployment, "runapp", f"127.0.0.1:{port}", "--noreload", "--concurrency", "1")
    try:
        server.wait_for(f"http://127.0.0.1:{port}/accounts/login/", ready="ready.")
        children = server.children()
        assert any("celery" in line for line in cmdlines(children)), cmdlines(children)
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        assert_all_gone(children)
    finally:
        server.stop()


def test_serve_refuses_the_development_settings(prod):
    for debug in ("1", "0"):  # with DEBUG off too: the development settings serve no static files
        env = {**prod.env, "DJANGO_SETTINGS_MODULE": "config.settings.dev", "DEBUG": debug}
        result = subprocess.run(
            [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{free_port()}"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stdout
        assert "serve needs the production settings" in result.stderr
        assert "set DJANGO_SETTINGS_MODULE=config.settings.prod" in result.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ALLOWED_HOSTS": ""}, "ALLOWED_HOSTS must be set to the host names the site is served under"),
        (
            {"CSRF_TRUSTED_ORIGINS": "nsm.example.org"},
            "CSRF_TRUSTED_ORIGINS: 'nsm.example.org' must start with https:// (e.g. https://nsm.example.org)",
        ),
        ({"NSM_DB_POOL_MAX": "0"}, "NSM_DB_POOL_MAX=0 must be at least 1"),
        (
            {"SECURE_SSL_REDIRECT": "maybe"},
            "SECURE_SSL_REDIRECT='maybe' is not a boolean; use one of 1/0, true/false, yes/no, on/off",
        ),
    ],
)
def test_bad_production_settings_stop_with_one_line(prod, change, message):
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=prod.env | change,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert result.stderr == f"configuration error: {message}\n"


def check_deploy(prod: Deployment) -> subprocess.CompletedProcess:
    env = {**prod.env, "CSRF_TRUSTED_ORIGINS": "https://nsm.example.org"}
    env.pop("SECURE_SSL_REDIRECT")  # the production default: on
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_check_deploy_finds_nothing_to_secure_in_the_production_settings(prod):
    result = check_deploy(prod)
    assert "security." not in result.stdout + result.stderr, result.stdout + result.stderr


def test_check_deploy_prints_no_warning_at_all(prod):
    result = check_deploy(prod)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_postgresql_connections_come_from_a_bounded_pool(prod, postgres_database):
    env = {**prod.env, "DATABASE_URL": postgres_database, "NSM_DB_POOL_MIN": "1", "NSM_DB_POOL_MAX": "2"}
    show = (
        "from django.db import connection; connection.ensure_connection(); "
        "print(type(connection.pool).__name__, connection.pool.min_size, connection.pool.max_size, "
        "connection.settings_dict['CONN_MAX_AGE'])"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", show],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].split() == ["ConnectionPool", "1", "2", "0"]


def test_gunicorn_by_hand_with_a_weak_key_stops_once_not_respawning_its_workers(prod):
    """docs/deploy.md gives `gunicorn config.wsgi:application` as the way without `serve`. Each
    worker loads the settings; one that exited 2 on a weak SECRET_KEY was respawned by the
    master, forever, the same line each time. A worker that cannot boot now exits with
    gunicorn's own code for that, and the master stops with it."""
    gunicorn = Path(sys.executable).parent / "gunicorn"
    result = subprocess.run(
        [gunicorn, "config.wsgi:application", "--workers", "2", "--bind", "127.0.0.1:0"],
        cwd=ROOT,
        env=prod.env | {"SECRET_KEY": "change-me"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("configuration error:")]
    weak = "configuration error: SECRET_KEY is too weak (9 characters, 8 different; at least 50 and 5)"
    assert errors and {line.partition("; make one with")[0] for line in errors} == {weak}
    assert len(errors) <= 2  # each worker once at most: none respawned
    assert "Worker failed to boot" in result.stderr
