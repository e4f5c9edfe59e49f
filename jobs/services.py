"""Starting, running, cancelling and resuming background jobs, whatever their kind.

The kinds (prefill, verification, export...) register themselves in jobs.kinds from their own
modules; this plumbing only creates the row, hands it to the worker, runs the kind's runner with
its typed parameters, and records how it ended."""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.events import event_send
from annotator.models import ItemSet, Round
from jobs.heartbeat import Heartbeat, heartbeat_lost, runner_name
from jobs.kinds import DEFAULT_QUEUE, JobError, Params, job_kind
from jobs.models import Job

log = logging.getLogger(__name__)


class JobStateError(JobError):
    """The job is not in a state the action needs (cancelling a finished job, resuming one that has
    not stopped, or one whose twin is active): the request is sound, the job's state refuses it, so
    the API answers 409."""

    api_status = 409


class JobConflict(JobError):
    """The same job is already active: the API answers 409 with its id."""

    api_status = 409

    def __init__(self, job: Job):
        self.job = job
        super().__init__(
            _("job #%(id)s is already %(status)s on %(subject)s with these settings")
            % {"id": job.pk, "status": job.get_status_display(), "subject": job.subject}
        )

    def api_body(self) -> dict[str, Any]:
        return {"detail": str(self), "job": self.job.pk}


def job_create(
    kind: str, *, user, item_set: ItemSet | None, round_: Round | None, key: str, params: Params,
    total: int = 0, enqueue: bool,
) -> Job:  # fmt: skip
    """Create a job, unless the same one (kind, scope, key) is active: JobConflict names it. The
    job goes to the worker once the transaction commits. Neither item set nor round: the whole
    corpus. ``params`` must be the kind's own dataclass (checked when it was built)."""
    expected = job_kind(kind).params
    if type(params) is not expected:
        raise TypeError(f"a {kind} job takes {expected.__name__}, not {type(params).__name__}")
    if round_ is not None:
        where = f"round:{round_.pk}"
    else:
        where = f"set:{item_set.pk}" if item_set is not None else "all"
    scope = f"{where}|{key}"[:300]
    try:
        with transaction.atomic():
            job = Job.objects.create(
                kind=kind, params=params.to_json(), scope_key=scope, item_set=item_set, round=round_,
                total=total, created_by=user,
            )  # fmt: skip
    except IntegrityError:
        active = Job.objects.filter(kind=kind, scope_key=scope, status__in=("queued", "running"))
        raise JobConflict(active.first()) from None
    if enqueue:
        transaction.on_commit(lambda: job_enqueue(job=job))
    return job


#: how a job that could not be sent to the broker is failed (the API answers 503 with it)
QUEUE_DOWN = "the job queue cannot be reached"


def job_enqueue(*, job: Job) -> None:
    """Send the job to the broker. A broker that cannot be reached fails the job, with the reason."""
    # by name: jobs.tasks imports this module (the task is registered when the app is ready)
    try:
        result = current_app.tasks["jobs.run_job"].apply_async((job.pk,), queue=job_queue(job))
    except Exception as error:  # kombu raises several kinds; the job must not stay queued forever
        log.exception("could not enqueue job %s", job.pk)
        _finish(job.pk, Job.Status.FAILED, f"{QUEUE_DOWN}: {error}", from_=("queued",))
        return
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id or "")[:64])


def job_queue(job: Job) -> str:
    """The Celery queue the job goes to: its kind's (an unknown kind: the default queue, where
    job_run fails it with the reason)."""
    try:
        return job.job_kind.queue()
    except JobError:
        return DEFAULT_QUEUE


def job_cancel(*, job: Job) -> Job:
    """Ask the worker to stop after the current batch; a job not yet started stops at once."""
    if not job.is_active:
        raise JobStateError(
            _("job #%(id)s is %(status)s; only a queued or running job can be cancelled")
            % {"id": job.pk, "status": job.get_status_display()}
        )
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    _finish(job.pk, Job.Status.CANCELLED, "", from_=("queued",))
    if job.stalled:  # nobody is running it: nothing else would ever mark it
        _finish(job.pk, Job.Status.CANCELLED, "", from_=("running",))
    job.refresh_from_db()
    return job


def job_resume(*, job: Job) -> Job:
    """Queue a failed, cancelled or stalled job again and hand it to the worker. Items already
    parsed are skipped."""
    job = job_requeue(job=job)
    transaction.on_commit(lambda: job_enqueue(job=job))
    return job


def job_requeue(*, job: Job) -> Job:
    """A failed, cancelled or stalled job back to queued, without sending it to the worker (a
    command that runs the job in its own process calls this, then job_run)."""
    if not job.resumable_state:
        raise JobStateError(
            _("job #%(id)s is %(status)s; only a failed, cancelled or stalled job can be resumed")
            % {"id": job.pk, "status": job.get_status_display()}
        )
    if problem := job.resume_problem:
        raise JobStateError(_("job #%(id)s cannot resume: %(problem)s") % {"id": job.pk, "problem": problem})
    try:
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(
                status=Job.Status.QUEUED, cancel_requested=False, error="", finished_at=None, runner=""
            )
    except IntegrityError:
        raise JobStateError(
            _("another job is already active on %(subject)s with these settings") % {"subject": job.subject}
        ) from None
    job.refresh_from_db()
    return job


def _finish(
    job_id: int, status: str, error: str, *, from_: tuple[str, ...] = ("running",), runner: str | None = None
) -> bool:
    """End the job if it is in one of ``from_``; with ``runner``, only if that run still holds it
    (a run that lost its job to another worker must not end the other's work)."""
    held = {} if runner is None else {"runner": runner}
    ended = Job.objects.filter(pk=job_id, status__in=from_, **held).update(
        status=status, error=error, finished_at=timezone.now()
    )
    if ended and status in (Job.Status.DONE, Job.Status.FAILED):  # webhooks: job.finished (annotator.events)
        kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
        event_send("job.finished", {"job": job_id, "kind": kind, "status": status, "error": error[:2000]})
    return bool(ended)


def job_run(job_id: int) -> None:
    """The worker's side. Claims the job (queued -> running) so a duplicate delivery does nothing,
    then runs its kind with its typed parameters. Parameters that do not read (an unknown or
    missing key, a wrong type) fail the job with the field named; so does an engine that cannot
    work. Anything else fails it as an unexpected error and is raised again for the worker's log.
    A database that cannot be reached puts the job back in the queue and is raised again, for the
    task to retry (jobs.tasks)."""
    runner = runner_name()
    now = timezone.now()
    # a resumed job keeps the time it first started: its page's elapsed time and rate are the job's
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING,
        started_at=Coalesce("started_at", Value(now)),
        heartbeat_at=now,
        runner=runner,
        finished_at=None,
        error="",
    )
    if not claimed:
        return
    with _beating(job_id, runner):
        _run_claimed(job_id, runner)


def _beating(job_id: int, runner: str) -> AbstractContextManager:
    """The heartbeat of this run (jobs.heartbeat). Not inside a transaction (a test's, or a
    caller's atomic block): the claim is not committed, so no other connection could see a beat,
    nor a sweeper see the job running at all."""
    if transaction.get_connection().in_atomic_block:
        return nullcontext()
    return Heartbeat(job_id, runner, interval=settings.NSM_JOB_HEARTBEAT_SECONDS)


def _run_claimed(job_id: int, runner: str) -> None:
    job = Job.objects.select_related("item_set", "round").get(pk=job_id)
    try:
        kind = job.job_kind
        params = job.typed_params
    except JobError as error:
        _finish(job.pk, Job.Status.FAILED, str(error), runner=runner)
        return
    try:
        if kind.run(job, params):
            _finish(job.pk, Job.Status.DONE, "", runner=runner)
    except (JobError, *kind.expected) as error:
        _fail_keeping(job.pk, str(error), runner=runner)
    except OperationalError:
        log.warning("job %s: the database went away; back to the queue", job.pk, exc_info=True)
        _requeue(job.pk, runner)
        raise
    except Exception as error:
        log.exception("job %s failed", job.pk)
        _fail_keeping(job.pk, f"unexpected error: {type(error).__name__}: {error}", runner=runner)
        raise


def _requeue(job_id: int, runner: str) -> None:
    """A running job back to queued, for a retry to claim; if the database is still away, the job
    stays running without a heartbeat, and a sweeper resumes it once the database is back."""
    try:
        Job.objects.filter(pk=job_id, status=Job.Status.RUNNING, runner=runner).update(
            status=Job.Status.QUEUED, runner=""
        )
    except OperationalError:
        log.warning("job %s: could not put it back in the queue", job_id)


def jobs_resume_stalled() -> list[int]:
    """Put every running job whose heartbeat stopped back in the queue, to go on from where it
    was (what a person's Resume does); a job whose cancel was asked is marked cancelled instead.
    Each worker's sweeper calls this every few seconds (jobs.tasks). Returns the ids this call
    requeued, each sent to the worker once however many sweepers look at the same time."""
    cutoff = timezone.now() - timedelta(seconds=settings.NSM_JOB_STALL_SECONDS)
    requeued: list[int] = []
    for job_id in Job.objects.filter(_silent_since(cutoff)).values_list("pk", flat=True):
        if job_take_stalled(job_id, cutoff):
            log.warning("job %s: its worker stopped beating; back to the queue", job_id)
            job_enqueue(job=Job.objects.get(pk=job_id))
            requeued.append(job_id)
    return requeued


def _silent_since(cutoff) -> Q:
    """Running, with no heartbeat since ``cutoff`` (a row from before heartbeats: no progress)."""
    return Q(status=Job.Status.RUNNING) & (
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, updated_at__lt=cutoff)
    )


def job_take_stalled(job_id: int, cutoff) -> bool:
    """Take a job still silent since ``cutoff`` from the run that held it, back to queued; a job
    whose cancel was asked ends cancelled instead (and False: nothing to send). One conditional
    update: of several sweepers that saw the job stalled, exactly one gets True. The run that
    held it, if it is alive after all, finds its token gone at its next beat and stops."""
    silent = Job.objects.filter(_silent_since(cutoff), pk=job_id)
    if silent.filter(cancel_requested=True).update(
        status=Job.Status.CANCELLED, runner="", finished_at=timezone.now()
    ):
        return False
    return bool(
        silent.filter(cancel_requested=False).update(
            status=Job.Status.QUEUED, runner="", error="", finished_at=None
        )
    )


def job_give_up(job_id: int, message: str) -> None:
    """The task's retries are spent: the job fails with the reason, resumable by a person."""
    _finish(job_id, Job.Status.FAILED, message, from_=("queued", "running"))


def job_stopped(job_id: int) -> bool:
    """Between batches: if cancel was asked, mark the job cancelled and say so. Also say so when
    this run has lost the job to another worker (its heartbeat found the job no longer its own,
    jobs.heartbeat): it stops without touching the job, which the other run now writes."""
    if heartbeat_lost(job_id):
        return True
    if Job.objects.filter(pk=job_id, cancel_requested=True).exists():
        _finish(job_id, Job.Status.CANCELLED, "")
        return True
    return False


def _fail_keeping(job_id: int, message: str, *, runner: str | None = None) -> None:
    """Fail the job; the kind may add what the failed run keeps (work a resume will not redo)."""
    job = Job.objects.get(pk=job_id)
    kept = job.job_kind.kept(job) if job.job_kind.kept else ""
    _finish(job_id, Job.Status.FAILED, f"{message} ({kept})" if kept else message, runner=runner)
