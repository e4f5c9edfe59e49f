"""Load through the production server (issue 17): many annotators at once fetching and submitting
through the API of `manage.py serve` (gunicorn + a Celery worker, production settings, DEBUG off),
on PostgreSQL and on SQLite, with the same client.

    python benchmarks/run.py load                                  # 50 annotators x 60 s, both databases
    python benchmarks/bench_load.py --users 10 --seconds 10        # a short run, results not written
    python benchmarks/bench_load.py --databases postgres --workers 5 --write
    python benchmarks/bench_load.py --databases postgres --hooks 5 --write --results load_hooks
                                                                   # with webhooks registered (issue 28)

Set-up, each database fresh: migrate; the annotators, each with a logged-in session made directly
in the database (no password hashing) and more assignments of one prefilled round than they can do
in the time (two annotators per item, a parser's prediction as prefill). The server: `serve` with
the production settings (DEBUG off, ALLOWED_HOSTS, SECURE_SSL_REDIRECT=0 as there is no TLS proxy
on loopback), `--workers` gunicorn sync workers (default cores + 1, as `serve` picks), the pool
at its default bound of 4 connections a process; every worker has answered a few requests before
the clock starts. Also reported: the server's CPU time per request (its processes only, the
database apart), which a busy machine changes less than the latencies, and the load average.

The client: one thread per annotator on this machine, stdlib http.client, a new TCP connection per
request (gunicorn's sync workers close the connection after each answer anyway, as a browser tab
behind a buffering proxy would see it), the session cookie and a CSRF token as a browser sends
them. Each annotator loops without pause (``--think-ms`` adds one): fetch its pending assignments
when its list is empty (``list``), fetch the next one (``fetch``), submit a valid explication with
the version it fetched (``submit``, 200), then sometimes submit again with the version it got back
(``revise``, 200) and sometimes with the version it had before (``stale``, which must be 409).

Checked, not only timed: no answer of 500 or more and no failed connection; every other answer the
one expected; every 200 matches exactly one AnnotationRevision (assignment, version and the note the
client sent, which names the request), no revision without its 200, no 200 twice; and PostgreSQL's
connections to the benchmark database, sampled every 0.2 s from pg_stat_activity, never above the
bound the settings promise, (web workers + 1) x NSM_DB_POOL_MAX (docs/deploy.md).

Before issue 17 the development runner did p50 625 ms, p95 1,044 ms here; goal: p95 under 150 ms
(submit and fetch)."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import figure  # noqa: E402
from benchmarks.load_client import Annotator, Tally, warm_up  # noqa: E402

PG_ADMIN = os.environ.get("NSM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
SECRET = "load-benchmark-secret-not-for-production-7Kq2vR9mZ4pL8wN3tY6bH1cF5jD0gS"
TARGET_MS = 150
POOL_MAX = 4  # NSM_DB_POOL_MAX for the server (the production default)


def default_workers() -> int:
    """As `serve` picks them: cores + 1 (3 on this 2-core machine; its docstring has the figures)."""
    from server.management.commands.serve import default_web_workers

    return default_web_workers()


# ---------------------------------------------------------------------------------------------
# Outside: the databases, the server, the client.


@dataclass
class Database:
    kind: str  # "postgres" or "sqlite"
    url: str
    name: str = ""  # PostgreSQL: the database's name, for pg_stat_activity
    admin_url: str = ""


def _fresh_database(kind: str, folder: Path, admin_url: str) -> Database | None:
    if kind == "sqlite":
        return Database("sqlite", f"sqlite:///{folder / 'load.sqlite3'}")
    import psycopg

    name = f"nsm_load_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as error:
        print(f"  PostgreSQL not available at {admin_url} ({error}); skipping it")
        return None
    return Database("postgres", f"{admin_url.rsplit('/', 1)[0]}/{name}", name, admin_url)


def _drop(database: Database) -> None:
    if database.kind != "postgres":
        return
    import psycopg

    with psycopg.connect(database.admin_url, autocommit=True, connect_timeout=3) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database.name}" WITH (FORCE)')


def _env(database: Database, folder: Path) -> dict[str, str]:
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "NSM_", "REDIS_", "DATABASE_"))
    }
    return keep | {
        "DJANGO_SETTINGS_MODULE": "config.settings.prod",
        "SECRET_KEY": SECRET,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback: no TLS proxy in front
        "DATABASE_URL": database.url,
        "NSM_DB_POOL_MAX": str(POOL_MAX),
        "NSM_STATIC_ROOT": str(folder / "static"),
        "NSM_BROKER_DIR": str(folder / "broker"),
        "NSM_CACHE_URL": f"file://{folder / 'cache'}",
        "NSM_EXPORT_DIR": str(folder / "exports"),
        "NSM_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }


def _inside(env: dict[str, str], *args: str) -> Any:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "load_db.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode:
        raise RuntimeError(f"load_db {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`manage.py serve` with its output in a file."""

    def __init__(self, env: dict[str, str], folder: Path, workers: int):
        self.port = _free_port()
        self.log_path = folder / "serve.log"
        self.process = subprocess.Popen(
            [
                *[sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{self.port}"],
                *["--workers", str(workers), "--concurrency", "1"],
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log_path.open("w"),
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited:\n{self.log()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{self.log()[-3000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/accounts/login/")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)

    def cpu_seconds(self) -> float:
        """CPU time used so far by the server's processes (gunicorn and its workers, the job
        worker): the cost of a request apart from the wait for a busy machine's cores."""
        import psutil

        total = 0.0
        for process in [psutil.Process(self.process.pid), *psutil.Process(self.process.pid).children(True)]:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def database_cpu_seconds(database: Database) -> float:
    """CPU time used so far by the database server's processes on this machine (PostgreSQL's;
    SQLite runs inside the server's processes, so 0): with the server's and the client's, where
    each request's cost on the shared cores goes."""
    if database.kind != "postgres":
        return 0.0
    import psutil

    total = 0.0
    for process in psutil.process_iter(["name", "cpu_times"]):
        if (process.info["name"] or "").startswith(("postgres", "postmaster")) and process.info["cpu_times"]:
            total += process.info["cpu_times"].user + process.info["cpu_times"].system
    return total


class ConnectionSampler(threading.Thread):
    """Counts the server's connections to the benchmark database every 0.2 s (its own
    connection is to the admin database, so it never counts itself)."""

    def __init__(self, database: Database):
        super().__init__(daemon=True)
        self.database = database
        self.samples: list[int] = []
        self.max_connections = 0
        self.done = threading.Event()

    def run(self) -> None:
        import psycopg

        with psycopg.connect(self.database.admin_url, autocommit=True) as conn:
            self.max_connections = int(conn.execute("SHOW max_connections").fetchone()[0])
            while not self.done.is_set():
                (count,) = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.database.name,)
                ).fetchone()
                self.samples.append(count)
                self.done.wait(0.2)


def _percentiles(samples: list[float]) -> dict[str, float]:
    if len(samples) < 2:
        return {"p50": 1000 * samples[0], "p95": 1000 * samples[0]} if samples else {}
    q = statistics.quantiles(samples, n=100)
    return {"p50": 1000 * q[49], "p95": 1000 * q[94], "p99": 1000 * q[98]}


def check_writes(saved: list[tuple[int, int, str]], stored: list[list[Any]]) -> dict[str, int]:
    """Every 200 against the stored revisions: lost (a 200 with no revision, or one with another
    note), duplicated (two 200s for one version), unacknowledged (a revision without its 200)."""
    answered = Counter((a, v) for a, v, _ in saved)
    rows = {(a, v): note for a, v, note in stored}
    lost = sum(1 for a, v, note in saved if rows.get((a, v)) != note)
    return {
        "answered": len(saved),
        "stored": len(stored),
        "lost": lost,
        "duplicated": sum(n - 1 for n in answered.values() if n > 1),
        "unacknowledged": sum(1 for key in rows if key not in answered),
    }


def load(
    kind: str, *, users: int, seconds: float, workers: int, admin_url: str, think_ms: int = 0, hooks: int = 0
) -> dict[str, Any] | None:
    """One run on a fresh database: the figures' raw material."""
    folder = ROOT / "var" / "bench" / f"load-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True)
    database = _fresh_database(kind, folder, admin_url)
    if database is None:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    server = None
    sampler = None
    try:
        env = _env(database, folder)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
        )
        # More than they can do (an annotator who runs out is counted: ``ran_out``): all of them
        # together saved 250 items a second here on 2026-11-28 and 370 on 2026-11-29, when 250
        # a second ran them dry 4 s early
        per_user = 50 + int(seconds * 800 / users)
        setup = _inside(env, "populate", str(users), str(per_user), str(hooks))
        server = Server(env, folder, workers)
        server.wait_ready()
        tally = Tally()
        annotators = [
            Annotator(name, session, server.port, tally, 0, think_ms / 1000)
            for name, session in setup["sessions"].items()
        ]
        warm_up(annotators)
        if database.kind == "postgres":
            sampler = ConnectionSampler(database)
            sampler.start()
        cpu_before = server.cpu_seconds()
        database_cpu_before = database_cpu_seconds(database)
        client_cpu_before = time.process_time()  # every thread of this process: the annotators
        start = time.monotonic()
        for annotator in annotators:
            annotator.stop_at = start + seconds
            annotator.start()
        for annotator in annotators:
            annotator.join()
        elapsed = time.monotonic() - start
        cpu = server.cpu_seconds() - cpu_before
        database_cpu = database_cpu_seconds(database) - database_cpu_before
        client_cpu = time.process_time() - client_cpu_before
        if sampler:
            sampler.done.set()
            sampler.join()
        server.stop()
        server_errors = sum(n for (_, status), n in tally.statuses.items() if status >= 500)
        writes = check_writes(tally.saved, _inside(env, "revisions"))
        return {
            "kind": kind,
            "users": users,
            "seconds": round(elapsed, 1),
            "workers": workers,
            "think_ms": think_ms,
            "hooks": hooks,
            "requests": sum(tally.statuses.values()),
            # Little's law: with no pause between requests, the mean latency is the annotators
            # over the throughput, whatever the server; below it only a faster request goes.
            "users_over_throughput_ms": round(
                1000 * users * elapsed / max(1, sum(tally.statuses.values())), 1
            ),
            "server_cpu_ms_per_request": round(1000 * cpu / max(1, sum(tally.statuses.values())), 2),
            "database_cpu_ms_per_request": round(
                1000 * database_cpu / max(1, sum(tally.statuses.values())), 2
            ),
            "client_cpu_ms_per_request": round(1000 * client_cpu / max(1, sum(tally.statuses.values())), 2),
            "load_average": os.getloadavg(),  # other work on the machine at the end of the run
            "statuses": {f"{k} {s}": n for (k, s), n in sorted(tally.statuses.items())},
            "server_errors": server_errors,
            "failed": len(tally.failed),
            "unexpected": len(tally.unexpected),
            "ran_out": len(tally.ran_out),
            "examples": (tally.failed + tally.unexpected)[:5],
            "latency": {k: _percentiles(v) for k, v in sorted(tally.latency.items())},
            "all": _percentiles([x for v in tally.latency.values() for x in v]),
            "writes": writes,
            "connections_max": max(sampler.samples) if sampler and sampler.samples else None,
            "connections_bound": (workers + 1) * POOL_MAX if database.kind == "postgres" else None,
            "max_connections": sampler.max_connections if sampler else None,
            # the exceptions behind any 500, as the server logged them
            "server_exceptions": Counter(
                line
                for line in server.log().splitlines()
                if line.split(":")[0].endswith(("Error", "Exception"))
            ).most_common(5),
        }
    finally:
        if sampler:
            sampler.done.set()
        if server:
            server.stop()
        _drop(database)
        shutil.rmtree(folder, ignore_errors=True)


def figures_of(result: dict[str, Any]) -> list[dict]:
    kind, lat = result["kind"], result["latency"]
    label = f"{kind}, {result['users']} annotators x {result['seconds']:.0f} s, {result['workers']} workers"
    if result.get("think_ms"):
        # a paced run is another measurement, not this one's: its figures are named apart
        kind = f"{kind}, {result['think_ms']} ms between items"
        label = f"{label}, {result['think_ms']} ms between items"
    if result.get("hooks"):
        kind = f"{kind}, {result['hooks']} webhooks to a dead address"
        label = f"{label}, {result['hooks']} webhooks to a dead address"
    out = []
    for name in ("fetch", "submit"):
        if name in lat:
            p95 = round(lat[name]["p95"], 1)
            out.append(figure(f"{name} p95 ({label})", p95, "ms", f"< {TARGET_MS} ms", p95 < TARGET_MS))
            out.append(figure(f"{name} p50 ({kind})", round(lat[name]["p50"], 1), "ms"))
    out.append(
        figure(f"app CPU per request, database apart ({kind})", result["server_cpu_ms_per_request"], "ms")
    )
    if result["database_cpu_ms_per_request"]:
        out.append(figure(f"database CPU per request ({kind})", result["database_cpu_ms_per_request"], "ms"))
    out.append(figure(f"load client CPU per request ({kind})", result["client_cpu_ms_per_request"], "ms"))
    out.append(figure(f"all requests p50 ({kind})", round(result["all"]["p50"], 1), "ms"))
    out.append(figure(f"all requests p95 ({kind})", round(result["all"]["p95"], 1), "ms"))
    out.append(
        figure(
            f"requests per second ({kind})",
            round(result["requests"] / result["seconds"], 1),
            "1/s",
            statuses=result["statuses"],
            users_over_throughput_ms=result["users_over_throughput_ms"],
            load_average=result["load_average"],
        )
    )
    ran_out = result["ran_out"]
    out.append(
        figure(f"annotators out of work before the end ({kind})", ran_out, "annotators", "0", ran_out == 0)
    )
    errors = result["server_errors"] + result["failed"]
    out.append(figure(f"server errors and failed connections ({kind})", errors, "requests", "0", errors == 0))
    out.append(
        figure(
            f"unexpected answers ({kind})", result["unexpected"], "requests", "0", result["unexpected"] == 0
        )
    )
    w = result["writes"]
    bad = w["lost"] + w["duplicated"] + w["unacknowledged"]
    out.append(
        figure(
            f"writes lost, duplicated or unacknowledged ({kind}, of {w['answered']:,} saved)",
            bad,
            "writes",
            "0",
            bad == 0,
            **w,
        )
    )
    if result["connections_max"] is not None:
        bound = result["connections_bound"]
        out.append(
            figure(
                f"PostgreSQL connections, most at once (bound (workers + 1) x {POOL_MAX} = {bound})",
                result["connections_max"],
                "connections",
                f"<= {bound}",
                # and the bound itself below the server's limit, or logins could fail again
                result["connections_max"] <= bound < result["max_connections"],
                max_connections=result["max_connections"],
            )
        )
    return out


def run(
    quick: bool = False,
    *,
    users: int = 50,
    seconds: float = 60,
    workers: int | None = None,
    admin_url: str = PG_ADMIN,
    databases: tuple[str, ...] = ("postgres", "sqlite"),
    think_ms: int = 0,
    hooks: int = 0,
) -> list[dict]:
    if quick:
        users, seconds = min(users, 10), min(seconds, 10)
    figures = []
    for kind in databases:
        result = load(
            kind,
            users=users,
            seconds=seconds,
            workers=workers or default_workers(),
            admin_url=admin_url,
            think_ms=think_ms,
            hooks=hooks,
        )
        if result is None:
            continue
        print(json.dumps(result, indent=1))
        figures += figures_of(result)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=50, help="annotators at once (default 50)")
    parser.add_argument("--seconds", type=float, default=60, help="how long they work (default 60)")
    parser.add_argument(
        "--workers", type=int, default=default_workers(), help="gunicorn workers (as serve: cores + 1)"
    )
    parser.add_argument(
        "--database-url",
        default=PG_ADMIN,
        help="the PostgreSQL server's admin database; the benchmark creates and drops its own there",
    )
    parser.add_argument("--databases", default="postgres,sqlite", help="postgres, sqlite or both")
    parser.add_argument("--think-ms", type=int, default=0, help="pause of each annotator between items")
    parser.add_argument(
        "--hooks", type=int, default=0, help="webhooks registered for every event (dead address)"
    )
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/RESULTS.json")
    parser.add_argument(
        "--results", default="load", help="the results file's name (default load; a paced run: load_paced)"
    )
    args = parser.parse_args()
    figures = run(
        users=args.users,
        seconds=args.seconds,
        workers=args.workers,
        admin_url=args.database_url,
        databases=tuple(args.databases.split(",")),
        think_ms=args.think_ms,
        hooks=args.hooks,
    )
    missed = 0
    for f in figures:
        mark = f"  target {f['target']}: {'met' if f['met'] else 'MISSED'}" if "target" in f else ""
        missed += "target" in f and not f["met"]
        print(f"  {f['name']:75} {f['value']:>10,} {f['unit']}{mark}")
    if args.write and figures:
        from benchmarks.common import write

        print(f"  -> {write(args.results, figures).relative_to(ROOT)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
