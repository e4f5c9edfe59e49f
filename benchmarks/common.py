"""Shared benchmark helpers: timing, machine description, and writing results into the repo."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def pride_slots() -> dict[str, str]:
    """The explication the workspace benchmark prefills and submits (routes to pride)."""
    from nsmcore import Explication

    return Explication(
        trigger="someone-did-something",
        agency="i",
        realization="happened",
        evaluation="feel-good",
        eval_target="self",
    ).slots()


def session_for(user: Any) -> str:
    """The key of a logged-in session for ``user``, made directly (no password to hash) as
    Django's login() makes one: the configured session engine and authentication backend. Call it
    with Django set up."""
    from importlib import import_module

    from django.conf import settings

    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session["_auth_user_id"] = str(user.pk)
    # the backend that reads a session's user, as Django's force_login picks it (django-axes, first
    # in the list, only refuses locked-out logins and reads no user)
    from django.contrib.auth import load_backend

    backend = next(
        path for path in settings.AUTHENTICATION_BACKENDS if hasattr(load_backend(path), "get_user")
    )
    session["_auth_user_backend"] = backend
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return session.session_key


def prefilled_item_set(source: str, explication: dict[str, str]) -> Any:
    """An item set named ``source`` of every item of ``source`` in id order, each with a legal
    prediction of parser ``source`` (``explication``): what a prefilled round of a benchmark runs
    over. Call it with Django set up, inside the caller's transaction."""
    from annotator.models import Item, ItemSet, ItemSetMember, ParserPrediction

    ids = list(Item.objects.filter(source=source).order_by("id").values_list("id", flat=True))
    ParserPrediction.objects.bulk_create(
        [ParserPrediction(item_id=i, parser=source, explication=explication, legal=True) for i in ids],
        batch_size=5000,
    )
    item_set = ItemSet.objects.create(name=source, size=len(ids))
    ItemSetMember.objects.bulk_create(
        [ItemSetMember(item_set=item_set, item_id=i, position=p) for p, i in enumerate(ids)],
        batch_size=5000,
    )
    return item_set


def timed(fn: Callable[[], Any], *, repeat: int = 5, warmup: int = 1) -> tuple[float, Any]:
    """Median wall-clock seconds over ``repeat`` runs after ``warmup`` runs, and the last result."""
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def machine() -> dict[str, Any]:
    import numpy

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
    }


def write(name: str, figures: list[dict[str, Any]]) -> Path:
    """Write results/<name>.json: each figure has a name, value, unit and (optional) target."""
    RESULTS.mkdir(exist_ok=True)
    doc = {
        "benchmark": name,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "figures": figures,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def figure(
    name: str, value: float, unit: str, target: str | None = None, met: bool | None = None, **notes: Any
) -> dict:
    # the machine's load beside every figure (1, 5 and 15 minutes), unless the benchmark measured
    # its own over the run: a figure from a busy machine says so
    notes.setdefault("load_average", [round(x, 2) for x in os.getloadavg()])
    out: dict[str, Any] = {"name": name, "value": value, "unit": unit, **notes}
    if target is not None:
        out["target"] = target
        out["met"] = met
    return out


def run_on_fresh_sqlite(script: Path, *args: str) -> dict[str, Any]:
    """Run a benchmark script in a subprocess on a throwaway SQLite database (and broker folder);
    it prints one JSON line of timings, returned here."""
    return runs_on_fresh_sqlite(script, args)[0]


def runs_on_fresh_sqlite(script: Path, *runs: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    """Run a benchmark script once per argument list, each in a process of its own (a first
    request's one-off costs are a fresh process's), on one throwaway SQLite database (and broker
    folder); each run prints one JSON line of timings, returned here in order."""
    import subprocess
    import sys
    import tempfile

    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.dev",
            "DEBUG": "0",
            "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3",
            "NSM_BROKER_DIR": f"{folder}/broker",
            "NSM_CACHE_URL": f"file://{folder}/cache",
            "PYTHONPATH": str(root),
            "ALLOWED_HOSTS": "testserver",
        }
        # migrated first by its own process, as a deployment is (`make run`, docs/deploy.md): a
        # SQLite file with content is opened in WAL mode (config.env), where a job's heartbeat thread
        # can write while the job reads; a file still empty when the script started would stay in
        # rollback-journal mode for it, where a long read blocks the beat and the beat the job's
        # next write ("database is locked" after the timeout)
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=root, env=env, capture_output=True, text=True,
        )  # fmt: skip
        if migrate.returncode:
            raise RuntimeError(f"migrate for {script.name} failed:\n{migrate.stderr[-3000:]}")
        results = []
        for args in runs:
            out = subprocess.run(
                [sys.executable, str(script), *args], cwd=root, env=env, capture_output=True, text=True
            )
            if out.returncode:
                raise RuntimeError(f"{script.name} {' '.join(args)} failed:\n{out.stderr[-3000:]}")
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return results
