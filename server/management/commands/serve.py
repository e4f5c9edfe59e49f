"""`manage.py serve`: the production server, gunicorn and a Celery worker as one unit.

Run it with the production settings (DJANGO_SETTINGS_MODULE=config.settings.prod; docs/deploy.md).
It collects the static files (whitenoise serves them with hashed names), then supervises gunicorn
(several worker processes) and the job worker: SIGTERM or SIGINT stops both, and if either exits
the other is stopped and serve exits 1, so a process manager restarts the whole unit."""

from __future__ import annotations

import os
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from config.env import env_int, env_str
from server.supervisor import (
    add_queues_argument,
    broker_description,
    children_env,
    exec_supervisor,
    worker_command,
)

WHITENOISE = "whitenoise.middleware.WhiteNoiseMiddleware"


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def default_web_workers() -> int:
    """Cores + 1, at least 2 and at most 8 (each holds its own database pool). gunicorn's starting
    point of 2 x cores + 1 is for requests that wait; this app's are short and busy, and every
    process more than the cores can run makes each request cost more CPU. Measured with
    benchmarks/bench_load.py (50 annotators without pause, PostgreSQL, 2 cores, 20 s runs
    alternated): 3 workers 2.5-2.7 ms of server CPU a request, 487-511 req/s, submit p95 111-117
    ms; 5 workers 3.2-3.4 ms, 413-427 req/s, 145 ms."""
    return max(2, min((os.cpu_count() or 1) + 1, 8))


class Command(BaseCommand):
    help = "Run the production server: gunicorn (several workers) and a background-job worker."

    def add_arguments(self, parser):
        parser.add_argument(
            "--bind",
            default=env_str("NSM_BIND", "127.0.0.1:8000"),
            help="address:port gunicorn listens on (NSM_BIND; default 127.0.0.1:8000, behind the TLS proxy)",
        )
        parser.add_argument(
            "--workers",
            type=_positive,
            default=env_int("NSM_WEB_WORKERS", default_web_workers()),
            help="gunicorn worker processes (NSM_WEB_WORKERS; default cores + 1, from 2 to 8)",
        )
        parser.add_argument(
            "--concurrency",
            type=_positive,
            default=env_int("NSM_WORKER_CONCURRENCY", 2),
            help="jobs the worker runs at once (NSM_WORKER_CONCURRENCY; default 2)",
        )
        parser.add_argument(
            "--timeout",
            type=_positive,
            default=env_int("NSM_WEB_TIMEOUT", 60),
            help="seconds gunicorn lets a request run before it restarts the worker (NSM_WEB_TIMEOUT)",
        )
        parser.add_argument(
            "--grace",
            type=_positive,
            default=env_int("NSM_STOP_GRACE", 30),
            help="seconds each process gets to finish on stop before it is killed (NSM_STOP_GRACE)",
        )
        add_queues_argument(parser)
        parser.add_argument(
            "--no-collectstatic",
            action="store_true",
            help="skip collectstatic (when the release step already ran it)",
        )

    def handle(self, *args, **options):
        if settings.DEBUG or WHITENOISE not in settings.MIDDLEWARE:
            raise CommandError(
                "serve needs the production settings (DEBUG off, static files served by whitenoise): "
                "set DJANGO_SETTINGS_MODULE=config.settings.prod",
                returncode=2,
            )
        if not options["no_collectstatic"]:
            call_command("collectstatic", interactive=False, verbosity=0)
            self.stdout.write(f"Static files collected in {settings.STATIC_ROOT}.")
        settings_module = os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.prod")
        web = [
            *[sys.executable, "-m", "gunicorn", "config.wsgi:application"],
            *["--bind", options["bind"], "--workers", str(options["workers"])],
            *["--timeout", str(options["timeout"]), "--graceful-timeout", str(options["grace"])],
            *["--access-logfile", "-", "--error-logfile", "-"],
            # gunicorn 27's control socket is one path per user (~/.gunicorn/gunicorn.ctl), which
            # two deployments on one host would share; serve supervises by signals and needs none
            "--no-control-socket",
        ]
        queues = options["queues"] or settings.NSM_WORKER_QUEUES
        worker = worker_command(concurrency=options["concurrency"], hostname="nsm@%h", queues=queues)
        self.stdout.write(
            f"Serving on {options['bind']} with {options['workers']} gunicorn workers and a job worker "
            f"({options['concurrency']} at once, queues {','.join(queues)}) on {broker_description()}."
        )
        self.stdout.flush()
        exec_supervisor(
            {"gunicorn": web, "worker": worker},
            env=children_env(settings_module),
            grace=options["grace"] + 5,
            restart={"worker"},
            failure="a process of the server exited; the server stopped",
        )
