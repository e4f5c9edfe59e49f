"""`manage.py runapp [ADDR:PORT]`: the development web server and a Celery worker together (what
`make run` runs).

The worker uses the configured broker: Redis when REDIS_URL is set, otherwise the embedded
filesystem broker under var/broker, so background jobs run with progress on a fresh machine with
no server installed. Both run as children of this command (server.supervisor): Ctrl-C or SIGTERM
stops both, and if either exits the other is stopped too. (The web server once ran inside this
process, and a SIGTERM killed it without stopping the worker, which went on taking jobs.)"""

from __future__ import annotations

import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand

from server.supervisor import (
    add_queues_argument,
    broker_description,
    children_env,
    exec_supervisor,
    worker_command,
)


class Command(BaseCommand):
    help = "Run the development web server and a background-job worker."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--concurrency", type=int, default=2, help="jobs the worker runs at once")
        add_queues_argument(parser)
        parser.add_argument(
            "--noreload", action="store_true", help="do not restart the web server on code changes"
        )

    def handle(self, *args, **options):
        queues = options["queues"] or settings.NSM_WORKER_QUEUES
        self.stdout.write(
            f"Starting the web server and a background-job worker (queues {','.join(queues)}) "
            f"on {broker_description()}."
        )
        self.stdout.flush()
        settings_module = os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings.dev")
        web = [sys.executable, str(settings.BASE_DIR / "manage.py"), "runserver", options["addrport"]]
        if options["noreload"]:
            web.append("--noreload")
        worker = worker_command(concurrency=options["concurrency"], hostname="nsm-dev@%h", queues=queues)
        exec_supervisor(
            {"web": web, "worker": worker},
            env=children_env(settings_module),
            grace=10,
            restart={"worker"},
            failure="the web server exited; the worker is stopped",
        )
