"""Run a job in this process with a progress line on the terminal (shared by the commands)."""

from __future__ import annotations

import sys
import threading
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from annotator.models import ItemSet, Round
from jobs.models import Job
from jobs.services import job_run

#: without a terminal (a log file), a progress line at most this often
LOG_SECONDS = 10.0


def run_with_progress(command: BaseCommand, job: Job) -> Job:
    """The same job the worker would run, here, with its progress on stderr; returns it ended."""

    def run() -> None:
        try:
            job_run(job.pk)
        except Exception:  # recorded on the job (and logged); the caller reports it
            pass
        finally:
            connections.close_all()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    tty = sys.stderr.isatty()
    logged_at, logged_done = time.monotonic(), -1
    while worker.is_alive():
        worker.join(0.5)
        job.refresh_from_db()
        line = f"\r{job.done}/{job.total} {job.unit} ({job.percent}%)"
        if job.rate:
            line += f", {job.rate:.1f} {job.unit}/s"
        loss = (job.summary or {}).get("loss") if job.unit == "steps" else None
        if loss is not None:
            line += f", loss {loss:.4f}"
        if tty:
            command.stderr.write(line, ending="")
        elif job.done != logged_done and time.monotonic() - logged_at >= LOG_SECONDS:
            # a log file, not a terminal: a line now and then instead of one rewritten in place
            command.stderr.write(line.lstrip("\r"))
            logged_at, logged_done = time.monotonic(), job.done
    job.refresh_from_db()
    if tty:
        command.stderr.write("")
    return job


def scope_from_options(options: dict) -> dict:
    """``--item-set`` or ``--round`` as the services take them (``item_set=`` and ``round_=``)."""
    try:
        item_set = ItemSet.objects.get(name=options["item_set"]) if options["item_set"] else None
        round_ = Round.objects.get(name=options["round"]) if options["round"] else None
    except (ItemSet.DoesNotExist, Round.DoesNotExist):
        raise CommandError(
            f"no item set or round named {options['item_set'] or options['round']!r}", returncode=2
        ) from None
    return {"item_set": item_set, "round_": round_}
