"""Starting, running, cancelling and resuming background jobs."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from annotator.models import Item, ItemSet, ItemSetMember, ParserPrediction, Round
from jobs.models import Job
from jobs.parsers import parser_build
from nsmcore.parsers import BACKENDS, Parser, ParserUnavailable
from nsmcore.verifier import VerifierUnavailable

log = logging.getLogger(__name__)

TEXT_FIELDS = (Round.TEXT_GENERATED, Round.TEXT_MASKED)


#: how each kind of job runs in the worker: {kind: runner(job) -> completed}. A feature's module
#: registers its kind (jobs/apps.py imports them), so this plumbing imports no feature.
RUNNERS: dict[str, Callable[[Job], bool]] = {}


def job_kind_register(kind: str) -> Callable[[Callable[[Job], bool]], Callable[[Job], bool]]:
    def register(runner: Callable[[Job], bool]) -> Callable[[Job], bool]:
        RUNNERS[kind] = runner
        return runner

    return register


class JobError(ValueError):
    """A job that cannot be started or changed; the message says why."""


class JobConflict(JobError):
    def __init__(self, job: Job):
        self.job = job
        super().__init__(f"job #{job.pk} is already {job.status} on {job.subject} with this parser")


def job_prefill_start(
    *,
    user,
    item_set: ItemSet | None = None,
    round_: Round | None = None,
    backend: str = "",
    model: str = "",
    mode: str = "",
    text_field: str = "",
    overwrite: bool = False,
    enqueue: bool = True,
) -> Job:
    """Create a prefill job for an item set or a round and hand it to the worker (after commit).
    A round's items are read in the round's text field; an item set's in ``text_field``."""
    if (item_set is None) == (round_ is None):
        raise JobError("choose an item set or a round, not both")
    backend = backend or settings.NSM_PARSER_BACKEND
    if backend not in BACKENDS:
        raise JobError(f"unknown parser backend {backend!r}; backends: {', '.join(BACKENDS)}")
    if round_ is not None:
        item_set = round_.item_set
        text_field = round_.text_field
    text_field = text_field or Round.TEXT_GENERATED
    if text_field not in TEXT_FIELDS:
        raise JobError(f"unknown text field {text_field!r}; fields: {', '.join(TEXT_FIELDS)}")
    total = ItemSetMember.objects.filter(item_set=item_set).count()
    if not total:
        raise JobError(f"item set {item_set.name} has no items")
    params = {
        "backend": backend,
        "model": model,
        "mode": mode,
        "text_field": text_field,
        "overwrite": overwrite,
    }
    return job_create(
        Job.Kind.PREFILL, user=user, item_set=item_set, round_=round_, key=f"{backend}|{model}|{mode}",
        params=params, total=total, enqueue=enqueue,
    )  # fmt: skip


def job_create(
    kind: str, *, user, item_set: ItemSet | None, round_: Round | None, key: str, params: dict,
    total: int = 0, enqueue: bool,
) -> Job:  # fmt: skip
    """Create a job, unless the same one (kind, scope, key) is active: JobConflict names it. The
    job goes to the worker once the transaction commits. Neither item set nor round: the whole
    corpus."""
    if round_ is not None:
        where = f"round:{round_.pk}"
    else:
        where = f"set:{item_set.pk}" if item_set is not None else "all"
    scope = f"{where}|{key}"[:300]
    try:
        with transaction.atomic():
            job = Job.objects.create(
                kind=kind, params=params, scope_key=scope, item_set=item_set, round=round_, total=total,
                created_by=user,
            )  # fmt: skip
    except IntegrityError:
        active = Job.objects.filter(kind=kind, scope_key=scope, status__in=("queued", "running"))
        raise JobConflict(active.first()) from None
    if enqueue:
        transaction.on_commit(lambda: job_enqueue(job=job))
    return job


def job_enqueue(*, job: Job) -> None:
    """Send the job to the broker. A broker that cannot be reached fails the job, with the reason."""
    # by name: jobs.tasks imports this module (the task is registered when the app is ready)
    from celery import current_app

    try:
        result = current_app.tasks["jobs.run_job"].delay(job.pk)
    except Exception as error:  # kombu raises several kinds; the job must not stay queued forever
        log.exception("could not enqueue job %s", job.pk)
        _finish(job.pk, Job.Status.FAILED, f"the job queue cannot be reached: {error}", from_=("queued",))
        return
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id or "")[:64])


def job_cancel(*, job: Job) -> Job:
    """Ask the worker to stop after the current batch; a job not yet started stops at once."""
    if not job.is_active:
        raise JobError(f"job #{job.pk} is {job.status}; only a queued or running job can be cancelled")
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    _finish(job.pk, Job.Status.CANCELLED, "", from_=("queued",))
    if job.stalled:  # nobody is running it: nothing else would ever mark it
        _finish(job.pk, Job.Status.CANCELLED, "", from_=("running",))
    job.refresh_from_db()
    return job


def job_resume(*, job: Job) -> Job:
    """Queue a failed, cancelled or stalled job again. Items already parsed are skipped."""
    if not job.can_resume:
        raise JobError(
            f"job #{job.pk} is {job.status}; only a failed, cancelled or stalled job can be resumed"
        )
    try:
        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(
                status=Job.Status.QUEUED, cancel_requested=False, error="", finished_at=None
            )
    except IntegrityError:
        raise JobError(f"another job is already active on {job.subject} with this parser") from None
    transaction.on_commit(lambda: job_enqueue(job=job))
    job.refresh_from_db()
    return job


def _finish(job_id: int, status: str, error: str, *, from_: tuple[str, ...] = ("running",)) -> bool:
    return bool(
        Job.objects.filter(pk=job_id, status__in=from_).update(
            status=status, error=error, finished_at=timezone.now()
        )
    )


def job_run(job_id: int, *, parser_factory: Callable[..., Parser] = parser_build) -> None:
    """The worker's side. Claims the job (queued -> running) so a duplicate delivery does nothing."""
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING, started_at=timezone.now(), finished_at=None, error=""
    )
    if not claimed:
        return
    job = Job.objects.select_related("item_set", "round").get(pk=job_id)
    try:
        if job.kind == Job.Kind.PREFILL:
            completed = _run_prefill(job, parser_factory)
        else:
            completed = RUNNERS[job.kind](job)
        if completed:
            _finish(job.pk, Job.Status.DONE, "")
    except (ParserUnavailable, VerifierUnavailable) as error:
        _fail_keeping(job.pk, str(error))
    except Exception as error:
        log.exception("job %s failed", job.pk)
        _fail_keeping(job.pk, f"unexpected error: {type(error).__name__}: {error}")
        raise


def job_stopped(job_id: int) -> bool:
    """Between batches: if cancel was asked, mark the job cancelled and say so."""
    if Job.objects.filter(pk=job_id, cancel_requested=True).exists():
        _finish(job_id, Job.Status.CANCELLED, "")
        return True
    return False


def _fail_keeping(job_id: int, message: str) -> None:
    job = Job.objects.get(pk=job_id)
    if job.parsed:
        message += f" ({job.parsed} items parsed before the failure are kept; resume to go on)"
    _finish(job_id, Job.Status.FAILED, message)


def _run_prefill(job: Job, parser_factory: Callable[..., Parser]) -> bool:
    """Parse every item of the scope that has no prediction of this parser yet, batch by batch;
    False when cancelled."""
    params = job.params
    parser = parser_factory(
        backend=params["backend"], model=params.get("model", ""), mode=params.get("mode", "")
    )
    Job.objects.filter(pk=job.pk).update(parser_name=parser.name, parser_version=parser.version)
    if job.round_id and job.round.mode == Round.Mode.PREFILLED and job.round.prefill_parser != parser.name:
        # the round's forms read this parser's predictions, item by item as they arrive
        Round.objects.filter(pk=job.round_id).update(prefill_parser=parser.name)

    item_ids = list(
        ItemSetMember.objects.filter(item_set_id=job.item_set_id)
        .order_by("position")
        .values_list("item_id", flat=True)
    )
    existing = ParserPrediction.objects.filter(
        item_id__in=ItemSetMember.objects.filter(item_set_id=job.item_set_id).values("item_id"),
        parser=parser.name,
        parser_version=parser.version,
    )
    overwrite = bool(params.get("overwrite"))
    have = set() if overwrite else set(existing.values_list("item_id", flat=True))
    todo = [i for i in item_ids if i not in have]
    Job.objects.filter(pk=job.pk).update(skipped=len(have), done=len(have), legal=0, illegal=0)

    field = params.get("text_field", Round.TEXT_GENERATED)
    size = max(1, settings.NSM_JOB_BATCH_SIZE)
    for start in range(0, len(todo), size):
        if job_stopped(job.pk):
            return False
        batch = todo[start : start + size]
        items = Item.objects.in_bulk(batch)
        texts = [items[i].text_for(field) for i in batch]
        results = parser.parse(texts)
        rows = [
            ParserPrediction(
                item_id=item_id,
                parser=parser.name,
                parser_version=parser.version,
                explication=r.explication.as_dict() if r.explication else None,
                legal=r.legal,
                errors=[p.as_dict() for p in r.errors],
                raw_output=r.raw_output,
                seconds=r.seconds,
                job_id=job.pk,
            )
            for item_id, r in zip(batch, results, strict=True)
        ]
        legal = sum(r.legal for r in results)
        with transaction.atomic():
            if overwrite:
                existing.filter(item_id__in=batch).delete()
            ParserPrediction.objects.bulk_create(rows, ignore_conflicts=True)
            Job.objects.filter(pk=job.pk).update(
                done=F("done") + len(batch),
                legal=F("legal") + legal,
                illegal=F("illegal") + len(batch) - legal,
            )
    return True
