"""`manage.py runapp [ADDR:PORT]`: the web server and a Celery worker together (what `make run` runs).

The worker uses the configured broker: Redis when REDIS_URL is set, otherwise the embedded
filesystem broker under var/broker, so background jobs run with progress on a fresh machine with
no server installed. Stopping the command (Ctrl-C) stops both."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Run the development web server and a background-job worker."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--concurrency", type=int, default=2, help="jobs the worker runs at once")
        parser.add_argument(
            "--noreload", action="store_true", help="do not restart the web server on code changes"
        )

    def handle(self, *args, **options):
        # runserver's autoreloader runs this command again in a child (RUN_MAIN=true); only the
        # outer process starts the worker, so a reload never starts a second one.
        worker = None
        if os.environ.get("RUN_MAIN") != "true":
            broker = "Redis" if settings.REDIS_URL else f"the embedded broker in {settings.NSM_BROKER_DIR}"
            self.stdout.write(f"Starting a background-job worker on {broker}.")
            settings_module = os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.dev")
            worker = subprocess.Popen(
                [
                    sys.executable, "-m", "celery", "-A", "config", "worker",
                    "--pool", "threads", "--concurrency", str(options["concurrency"]),
                    "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--hostname", "nsm-dev@%h",
                ],
                env={**os.environ, "DJANGO_SETTINGS_MODULE": settings_module},
            )  # fmt: skip
        try:
            call_command("runserver", options["addrport"], use_reloader=not options["noreload"])
        finally:
            if worker is not None:
                worker.terminate()
                try:
                    worker.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    worker.kill()
