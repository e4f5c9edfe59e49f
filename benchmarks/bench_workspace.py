"""Workspace speed (issue 3): importing the crowd-enVent copy, and the annotation page and
submit latency over HTTP on loopback with 100,000 items and 20 annotators in the database, on
SQLite and on PostgreSQL.

Targets: import of the 5,400 rows under 0.5 s (Label Studio 1.23 takes about 1 s for the same rows
on this machine); annotation page and submit each at p95 under 20 ms (Label Studio's task fetch
is at p95 92 ms and its submit at 74 ms here).

The server is `manage.py runserver --noreload` with DEBUG off, one request at a time from a
client on the same machine, opening a connection per request as a browser tab would.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

from benchmarks.common import figure, pride_slots

ROOT = Path(__file__).resolve().parent.parent
CROWD = ROOT.parent / "shared" / "data" / "crowd-enVent"
# Each run its own folder and PostgreSQL database, so two runs on one machine never share one.
RUN = f"{os.getpid()}_{uuid.uuid4().hex[:6]}"
BENCH_DIR = ROOT / "var" / "bench" / RUN
PG_ADMIN = os.environ.get("NSM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
PG_NAME = f"nsm_bench_{RUN}"
N_ITEMS, N_ANNOTATORS, N_REQUESTS = 100_000, 20, 300


def _env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONPATH": str(ROOT),
    }


def _run(args: list[str], database_url: str) -> str:
    result = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=_env(database_url), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def _fresh_database(kind: str) -> str | None:
    if kind == "sqlite":
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        path = BENCH_DIR / "workspace.sqlite3"
        path.unlink(missing_ok=True)
        return f"sqlite:///{path}"
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{PG_NAME}"')
    except Exception as error:  # no server: report it and go on with SQLite
        print(f"  PostgreSQL not available ({error}); skipping it")
        return None
    return f"{PG_ADMIN.rsplit('/', 1)[0]}/{PG_NAME}"


def _drop_postgres() -> None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
    except Exception as error:  # no server: nothing was created
        print(f"  PostgreSQL database {PG_NAME} not dropped ({error})")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(port: int, method: str, path: str, cookies: str, body: str = "") -> tuple[int, bytes, float]:
    headers = {"Cookie": cookies, "Host": "127.0.0.1"}
    if body:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["Referer"] = f"http://127.0.0.1:{port}{path}"
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path, body=body or None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    elapsed = time.perf_counter() - start
    conn.close()
    return response.status, data, elapsed


def _csrf(port: int, cookies: str, path: str) -> tuple[str, str]:
    """The CSRF cookie the page sets and the form token it renders, as a browser would get them."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Cookie": cookies, "Host": "127.0.0.1"})
    response = conn.getresponse()
    page = response.read()
    conn.close()
    if response.status != 200:
        raise RuntimeError(f"annotation page answered {response.status}")
    cookie = re.search(r"csrftoken=([^;]+)", response.getheader("Set-Cookie") or "")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    if not cookie or not token:
        raise RuntimeError("the page set no CSRF cookie or token")
    return cookie.group(1), token.group(1).decode()


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100)
    return {"p50_ms": 1000 * q[49], "p95_ms": 1000 * q[94], "p99_ms": 1000 * q[98]}


def _latency(kind: str, quick: bool, queue: bool = False) -> list[dict]:
    """The page, submit and draft latencies; with ``queue``, on a round served by a mixed learning
    queue (issue 27: the annotation page's p95 must not change with the queue on)."""
    url = _fresh_database(kind)
    if url is None:
        return []
    n_items = 10_000 if quick else N_ITEMS
    _run(["manage.py", "migrate", "--noinput", "-v0"], url)
    populate = ["benchmarks/workspace_worker.py", "populate", str(n_items), str(N_ANNOTATORS)]
    setup = json.loads(_run(populate + (["queue"] if queue else []), url))
    port = _free_port()
    server = subprocess.Popen(
        # One thread serving all requests keeps its database connection (CONN_MAX_AGE), as a
        # production worker does; threaded runserver would open a new connection per request.
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--nothreading"],
        cwd=ROOT,
        env=_env(url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        cookies = f"sessionid={setup['session']}"
        ids = setup["assignment_ids"]
        csrf_cookie, token = _csrf(port, cookies, f"/work/a/{ids[0]}/")
        cookies = f"{cookies}; csrftoken={csrf_cookie}"
        rng = random.Random(0)
        for _ in range(20):  # warm-up
            _request(port, "GET", f"/work/a/{rng.choice(ids)}/", cookies)
        gets = []
        for _ in range(N_REQUESTS):
            status, _, elapsed = _request(port, "GET", f"/work/a/{rng.choice(ids)}/", cookies)
            assert status == 200, status
            gets.append(elapsed)
        slots = pride_slots()
        # drafts: what the page sends a second after each change, on items not saved yet
        drafts = []
        for assignment_id in ids[100 + N_REQUESTS : 100 + 2 * N_REQUESTS]:
            fields = {**slots, "residue": "", "notes": "half done", "base_version": 0}
            body = urlencode({**fields, "csrfmiddlewaretoken": token})
            status, _, elapsed = _request(port, "POST", f"/work/a/{assignment_id}/draft/", cookies, body)
            assert status == 204, status
            drafts.append(elapsed)
        posts = []
        for assignment_id in ids[100 : 100 + N_REQUESTS]:
            body = urlencode(
                {
                    **slots,
                    "residue": "",
                    "notes": "",
                    "base_version": 0,
                    "time_spent_ms": 1000,
                    "csrfmiddlewaretoken": token,
                }
            )
            status, _, elapsed = _request(port, "POST", f"/work/a/{assignment_id}/", cookies, body)
            assert status == 302, status  # saved, redirected to the next item
            posts.append(elapsed)
    finally:
        server.terminate()
        server.wait(timeout=10)
    get_p, post_p, draft_p = _percentiles(gets), _percentiles(posts), _percentiles(drafts)
    label = f"{kind}, {setup['items']:,} items, {setup['annotators']} annotators"
    if queue:
        return [
            figure(
                f"annotation page p95 ({label}, mixed learning queue on)",
                round(get_p["p95_ms"], 2),
                "ms",
                "< 20 ms, as with the queue off",
                get_p["p95_ms"] < 20,
            ),
            figure(
                f"submit p95 ({label}, mixed learning queue on)",
                round(post_p["p95_ms"], 2),
                "ms",
                "< 20 ms",
                post_p["p95_ms"] < 20,
            ),
            figure(
                f"learning queue computed from the database ({label})",
                round(setup["queue_s"], 1),
                "s",
                moved=setup["queue_moved"],
            ),
        ]
    return [
        figure(
            f"annotation page p95 ({label})", round(get_p["p95_ms"], 2), "ms", "< 20 ms", get_p["p95_ms"] < 20
        ),
        figure(f"annotation page p50 ({kind})", round(get_p["p50_ms"], 2), "ms"),
        figure(f"submit p95 ({label})", round(post_p["p95_ms"], 2), "ms", "< 20 ms", post_p["p95_ms"] < 20),
        figure(f"submit p50 ({kind})", round(post_p["p50_ms"], 2), "ms"),
        figure(
            f"draft save p95 ({label})",
            round(draft_p["p95_ms"], 2),
            "ms",
            "<= 10 ms",
            draft_p["p95_ms"] <= 10,
        ),
        figure(f"populating {setup['items']:,} items ({kind})", round(setup["seconds"], 1), "s"),
    ]


def _import(kind: str) -> list[dict]:
    url = _fresh_database(kind)
    if url is None:
        return []
    _run(["manage.py", "migrate", "--noinput", "-v0"], url)
    result = json.loads(_run(["benchmarks/workspace_worker.py", "import", str(CROWD)], url))
    return [
        figure(
            f"import crowd-enVent {result['rows']:,} rows ({kind}, median of 5)",
            round(result["median_s"], 3),
            "s",
            "< 0.5 s",
            result["median_s"] < 0.5,
        ),
        figure(
            f"re-import, all {result['reimport_unchanged']:,} unchanged ({kind})",
            round(result["reimport_s"], 3),
            "s",
        ),
    ]


def run(quick: bool = False) -> list[dict]:
    if not CROWD.is_dir():
        raise RuntimeError(f"the crowd-enVent copy is expected at {CROWD}")
    figures = []
    try:
        for kind in ("sqlite", "postgres"):
            figures += _import(kind)
            figures += _latency(kind, quick)
            if kind == "sqlite":
                figures += _latency(kind, quick, queue=True)
    finally:
        shutil.rmtree(BENCH_DIR, ignore_errors=True)
        _drop_postgres()
    return figures
