"""Run a job in this process with a progress line on the terminal (shared by the commands)."""

from __future__ import annotations

import sys
import threading

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from annotator.models import ItemSet, Round
from jobs.models import Job
from jobs.services import job_run


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
    while worker.is_alive():
        worker.join(0.5)
        job.refresh_from_db()
        line = f"\r{job.done}/{job.total} items ({job.percent}%)"
        if job.rate:
            line += f", {job.rate:.1f} items/s"
        if tty:
            command.stderr.write(line, ending="")
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
