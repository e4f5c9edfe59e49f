"""Starting the supervised web server and job worker (`manage.py serve`, `manage.py runapp`): the
worker's command line, its queues, and the exec into the bare supervising process (server.children,
whose docstring says how the children are watched, restarted and stopped)."""

from __future__ import annotations

import json
import os
import sys

from django.conf import settings

from server.children import SPEC_VARIABLE


def worker_command(
    *, concurrency: int, hostname: str, loglevel: str = "INFO", queues: list[str] | None = None
) -> list[str]:
    """The Celery worker both commands run: threads (the jobs are I/O and torch, which releases
    the GIL), no gossip or mingle (one worker per machine), taking the queues in
    NSM_WORKER_QUEUES (by default every kind's; docs/deploy.md, Workers on other machines)."""
    queues = settings.NSM_WORKER_QUEUES if queues is None else queues
    return [
        sys.executable, "-m", "celery", "-A", "config", "worker",
        "--pool", "threads", "--concurrency", str(concurrency), "--loglevel", loglevel,
        "--without-gossip", "--without-mingle", "--hostname", hostname, "--queues", ",".join(queues),
    ]  # fmt: skip


def children_env(settings_module: str) -> dict[str, str]:
    """The environment of the supervised web server and worker. CELERY_SKIP_CHECKS: the command
    that starts them (serve, runapp) has run Django's system checks, so the worker does not run
    them again; Celery's Django fixup would otherwise import every URL, view and template tag
    library into a process that serves none (about 20 MiB held for as long as it runs). A worker
    started on its own (``celery -A config worker``) still runs them."""
    return {**os.environ, "DJANGO_SETTINGS_MODULE": settings_module, "CELERY_SKIP_CHECKS": "1"}


def queue_list(value: str) -> list[str]:
    """A worker's queues from a command line (``celery,verify``); none at all is an error."""
    queues = [q.strip() for q in value.split(",") if q.strip()]
    if not queues:
        raise ValueError(f"no queue in {value!r}")
    return queues


def add_queues_argument(parser) -> None:
    """The --queues option of the commands that start a worker (serve, runapp)."""
    parser.add_argument(
        "--queues",
        type=queue_list,
        default=None,
        help="comma-separated job queues the worker takes (NSM_WORKER_QUEUES; default celery,verify: "
        "every kind; docs/deploy.md, Workers on other machines)",
    )


def broker_description() -> str:
    return "Redis" if settings.REDIS_URL else f"the embedded broker in {settings.NSM_BROKER_DIR}"


def exec_supervisor(
    children: dict[str, list[str]], *, env: dict[str, str], grace: float, restart: set[str], failure: str
) -> None:
    """Replace this process (a management command, with every app and library it loaded) by a
    fresh interpreter that only supervises: the same pid, so signals and process managers see no
    difference, and about 80 MiB less held for as long as the server runs (issue 24's memory
    goal). ``failure`` is the line written when a child ends the supervision."""
    spec = {"children": children, "env": env, "grace": grace, "restart": sorted(restart), "failure": failure}
    root = str(settings.BASE_DIR)
    code = f"import sys; sys.path.insert(0, {root!r}); from server.children import main; main()"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-c", code], {**os.environ, SPEC_VARIABLE: json.dumps(spec)})
