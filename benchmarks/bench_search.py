"""Search speed (issue 25): free-text search over 100,000 items (crowd-enVent's texts, repeated)
on SQLite (FTS5) and PostgreSQL (a GIN index), a page of 50 and its count per search, p95 over 200
searches of one to three words drawn from the texts. Target: < 50 ms on both. Beside it, the scan
the index replaces (``icontains`` on id, text and masked text)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import figure

ROOT = Path(__file__).resolve().parent.parent
CROWD = Path(os.environ.get("NSM_SHARED_DATA", ROOT.parent / "shared" / "data")) / "crowd-enVent"
PG_ADMIN = os.environ.get("NSM_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
PG_NAME = "nsm_bench_search"
N_ITEMS, N_SEARCHES = 100_000, 200


def _measure(database_url: str, folder: str, n: int, searches: int) -> dict:
    import json

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.dev", "DEBUG": "0",
           "DATABASE_URL": database_url, "NSM_BROKER_DIR": f"{folder}/broker",
           "NSM_CACHE_URL": f"file://{folder}/cache", "PYTHONPATH": str(ROOT)}  # fmt: skip
    for args in (["manage.py", "migrate", "--noinput", "-v0"],
                 ["benchmarks/search_db.py", str(n), str(searches),
                  *map(str, sorted(CROWD.glob("crowd-enVent-*.tsv")))]):  # fmt: skip
        out = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"{args[0]} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _postgres() -> str | None:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{PG_NAME}"')
    except Exception as error:  # no server: SQLite alone
        print(f"  PostgreSQL not available ({error}); skipping it")
        return None
    return f"{PG_ADMIN.rsplit('/', 1)[0]}/{PG_NAME}"


def run(quick: bool = False) -> list[dict]:
    if not CROWD.is_dir():
        print(f"  the crowd-enVent copy is expected at {CROWD} (or set NSM_SHARED_DATA)")
        return []
    n, searches = (10_000, 50) if quick else (N_ITEMS, N_SEARCHES)
    figures = []
    with tempfile.TemporaryDirectory() as folder:
        databases = [("SQLite", f"sqlite:///{folder}/search.sqlite3")]
        if (pg := _postgres()) is not None:
            databases.append(("PostgreSQL", pg))
        for label, url in databases:
            r = _measure(url, folder, n, searches)
            ms = round(r["p95"] * 1000, 1)
            figures += [
                figure(f"search {r['items']:,} items ({label}), a page and its count, p95 of {r['searches']}",
                       ms, "ms", "< 50 ms", ms < 50, median_ms=round(r["median"] * 1000, 1),
                       median_matches=r["median_hits"]),
                figure(f"the same without the index ({label}: icontains, p95 of 20)",
                       round(r["baseline_p95"] * 1000, 1), "ms"),
            ]  # fmt: skip
    if len(databases) > 1:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{PG_NAME}" WITH (FORCE)')
    return figures
