"""Other people's requests while someone floods the login page with wrong passwords (issue 24).

    python -m benchmarks.bench_login_flood [--database postgres|sqlite] [--seconds 15] [--write]

Set-up as the load benchmark's (benchmarks/bench_load.py, whose pieces this reuses): a fresh
database, `manage.py serve` with the production settings and `--workers` gunicorn workers,
``--users`` annotators with logged-in sessions fetching and submitting through the API without
pause. Two servers, one after the other on the same database:

- *throttling off*: NSM_LOGIN_FAILURES set beyond reach, as the site was before django-axes;
- *throttling on*: the defaults (5 failures lock an address or an account out for 15 minutes).

Each server is measured twice for ``--seconds``: quiet (the annotators alone), then under attack:
``--attackers`` threads, each a loop of GET the login page (for its CSRF cookie) and POST a wrong
password for an account name (names no account has: Django hashes the password all the same),
from this machine's one address, as the review did (six loops). Reported: the annotators' p50 and
p95 (fetch and submit together) quiet and under attack, the ratio (goal: under attack within 2x
of quiet), and what the attack got (attempts a second, and how many were refused with 429 before
any password was hashed).

Before django-axes the review measured p50 39 ms quiet and 1,248 ms under six loops (each attempt
costs a PBKDF2 hash, about 0.7 s of a web worker here).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_load import (  # noqa: E402
    PG_ADMIN,
    Server,
    _drop,
    _env,
    _fresh_database,
    _inside,
    _percentiles,
    default_workers,
)
from benchmarks.common import figure  # noqa: E402
from benchmarks.load_client import Annotator, Tally, warm_up  # noqa: E402

GOAL_RATIO = 2.0
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class Attacker(threading.Thread):
    """Wrong passwords in a loop, as a browser would send them (CSRF cookie and field)."""

    def __init__(self, port: int, usernames: list[str], stop_at: float):
        super().__init__(daemon=True)
        self.port, self.usernames, self.stop_at = port, usernames, stop_at
        self.statuses: Counter = Counter()

    def run(self) -> None:
        n = 0
        while time.monotonic() < self.stop_at:
            n += 1
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                conn.request("GET", "/accounts/login/", headers={"Host": "127.0.0.1"})
                page = conn.getresponse()
                body = page.read().decode()
                cookie = page.getheader("Set-Cookie", "").split(";")[0]
                match = TOKEN.search(body)
                if not match:  # locked out pages still carry the form; anything else is odd
                    self.statuses[f"GET {page.status}"] += 1
                    continue
                form = (
                    f"csrfmiddlewaretoken={match.group(1)}&username={self.usernames[n % len(self.usernames)]}"
                )
                form += f"&password=wrong-{n}"
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                headers = {
                    "Host": "127.0.0.1",
                    "Cookie": cookie,
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Referer": f"http://127.0.0.1:{self.port}/accounts/login/",
                }
                conn.request("POST", "/accounts/login/", body=form, headers=headers)
                answer = conn.getresponse()
                answer.read()
                self.statuses[answer.status] += 1
            except OSError as error:
                self.statuses[type(error).__name__] += 1


def phase(port: int, sessions: dict[str, str], seconds: float, attackers: int) -> dict[str, Any]:
    """The annotators for ``seconds``, with ``attackers`` flooding the login page meanwhile."""
    tally = Tally()
    annotators = [Annotator(name, session, port, tally, 0, 0) for name, session in sessions.items()]
    warm_up(annotators, rounds=1)
    start = time.monotonic()
    stop_at = start + seconds
    # names no account has (credential stuffing): Django hashes the password anyway, so that the
    # answer takes as long as for a real account (the annotators' own have no usable password)
    names = [f"someone{k}" for k in range(50)]
    flood = [Attacker(port, names, stop_at) for _ in range(attackers)]
    for thread in [*annotators, *flood]:
        if isinstance(thread, Annotator):
            thread.stop_at = stop_at
        thread.start()
    for thread in [*annotators, *flood]:
        thread.join()
    elapsed = time.monotonic() - start
    attack = sum((a.statuses for a in flood), Counter())
    served = [x for kind in ("fetch", "submit") for x in tally.latency.get(kind, [])]
    return {
        "seconds": round(elapsed, 1),
        "requests": sum(tally.statuses.values()),
        "latency": _percentiles(served),
        "server_errors": sum(n for (_, status), n in tally.statuses.items() if status >= 500),
        "attempts": sum(attack.values()),
        "attempts_per_second": round(sum(attack.values()) / elapsed, 1),
        "attack_statuses": {str(k): n for k, n in sorted(attack.items(), key=str)},
    }


def measure(kind: str, *, users: int, seconds: float, attackers: int, workers: int, admin_url: str) -> dict:
    folder = ROOT / "var" / "bench" / f"flood-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True)
    database = _fresh_database(kind, folder, admin_url)
    if database is None:
        shutil.rmtree(folder, ignore_errors=True)
        raise SystemExit(f"no {kind} database here")
    out: dict[str, Any] = {"database": kind, "users": users, "attackers": attackers, "workers": workers}
    try:
        env = _env(database, folder)
        import subprocess

        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
        )
        setup = _inside(env, "populate", str(users), str(50 + int(seconds * 2 * 250 / users)))
        for name, limit in (("throttling off", "1000000000"), ("throttling on", "")):
            server_env = {**env, "NSM_LOGIN_FAILURES": limit} if limit else env
            server = Server(server_env, folder, workers)
            try:
                server.wait_ready()
                quiet = phase(server.port, setup["sessions"], seconds, 0)
                attacked = phase(server.port, setup["sessions"], seconds, attackers)
            finally:
                server.stop()
            out[name] = {"quiet": quiet, "attacked": attacked, "load_average": os.getloadavg()}
            print(json.dumps({name: out[name]}, indent=1), flush=True)
    finally:
        _drop(database)
        shutil.rmtree(folder, ignore_errors=True)
    return out


def figures_of(result: dict[str, Any]) -> list[dict]:
    out = []
    where = f"{result['database']}, {result['users']} annotators, {result['attackers']} login floods"
    for name in ("throttling off", "throttling on"):
        run = result[name]
        quiet, attacked = run["quiet"]["latency"]["p50"], run["attacked"]["latency"]["p50"]
        ratio = attacked / quiet
        load = run["load_average"]
        out.append(
            figure(f"annotators' p50, quiet ({name}; {where})", round(quiet, 1), "ms", load_average=load)
        )
        out.append(
            figure(
                f"annotators' p50 under attack ({name}; {where})",
                round(attacked, 1),
                "ms",
                p95=round(run["attacked"]["latency"]["p95"], 1),
                load_average=load,
            )
        )
        extra = {"load_average": load, "attack": run["attacked"]["attack_statuses"]}
        if name == "throttling on":
            out.append(
                figure(
                    f"under attack / quiet p50 ({name}; {where})",
                    round(ratio, 2),
                    "x",
                    f"<= {GOAL_RATIO}",
                    ratio <= GOAL_RATIO,
                    **extra,
                )
            )
        else:
            out.append(figure(f"under attack / quiet p50 ({name}; {where})", round(ratio, 2), "x", **extra))
        out.append(
            figure(
                f"login attempts a second ({name}; {where})",
                run["attacked"]["attempts_per_second"],
                "1/s",
                load_average=load,
            )
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="postgres", choices=("postgres", "sqlite"))
    parser.add_argument("--users", type=int, default=10, help="annotators at work (default 10)")
    parser.add_argument("--attackers", type=int, default=6, help="login floods at once (default 6)")
    parser.add_argument("--seconds", type=float, default=15, help="each phase's length (default 15)")
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--database-url", default=PG_ADMIN)
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/login_flood.json")
    args = parser.parse_args()
    result = measure(
        args.database,
        users=args.users,
        seconds=args.seconds,
        attackers=args.attackers,
        workers=args.workers,
        admin_url=args.database_url,
    )
    figures = figures_of(result)
    missed = 0
    for f in figures:
        mark = f"  target {f['target']}: {'met' if f['met'] else 'MISSED'}" if "target" in f else ""
        missed += "target" in f and not f["met"]
        print(f"  {f['name']:95} {f['value']:>9,} {f['unit']}{mark}")
    if args.write:
        from benchmarks.common import write

        print(f"  -> {write('login_flood', figures).relative_to(ROOT)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
