"""The learning queue's jobs: ``ranking`` computes a round's queue; ``retrain`` trains the CPU parser
on the round's gold, prefills the round's items with it and computes the queue from its
posteriors (each step a job of its own kind, run here one after the other and listed on the Jobs
page); ``simulate`` runs the queue simulation with the round's gold as the oracle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import F
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from adjudication.models import GoldConstrual, GoldItem
from annotator.models import Round
from jobs.kinds import JobError, JobKind, Params, job_kind_register, setting
from jobs.models import Job
from jobs.services import job_create, job_run, job_stopped
from learning.models import QUEUE, RETRAIN, SIMULATE, QueuePolicy
from learning.services import queue_compute, resolved_gold
from nsmcore.queue import INFORMATIVE, MIXED, RANDOM, QueueError
from nsmcore.queue_simulation import DEFAULT_BATCH, DEFAULT_START, Example, band_series, simulate, summarise
from predictions.prefill import job_prefill_start
from training.train import job_train_start


@dataclass(frozen=True)
class QueueParams(Params):
    pass


@dataclass(frozen=True)
class RetrainParams(Params):
    #: why: "auto" (every N gold items) or "asked"
    trigger: str = "asked"


@dataclass(frozen=True)
class SimulateParams(Params):
    seeds: int = setting(5, min=1, max=20, label=gettext_noop("Seeds"))
    start: int = setting(DEFAULT_START, min=1, label=gettext_noop("Items to start from"))
    batch: int = setting(DEFAULT_BATCH, min=1, label=gettext_noop("Items per batch"))


def _policy(job: Job) -> QueuePolicy:
    policy = QueuePolicy.objects.select_related("round").filter(round_id=job.round_id).first()
    if policy is None:
        raise JobError(_("round %(round)s has no learning queue") % {"round": job.round})
    return policy


def run_queue(job: Job, params: QueueParams) -> bool:
    policy = _policy(job)
    Job.objects.filter(pk=job.pk).update(total=4, done=0)

    def progress(step: int, total: int) -> None:
        Job.objects.filter(pk=job.pk).update(done=step, total=total)

    result = queue_compute(policy=policy, progress=progress)
    Job.objects.filter(pk=job.pk).update(summary=result.as_dict(), engine=result.parser[:300])
    return True


def _run_inline(job: Job, step: Job, what: str) -> Job:
    """Run a job of another kind here, now, and fail this one with its error if it fails."""
    job_run(step.pk)
    step.refresh_from_db()
    if step.status != Job.Status.DONE:
        raise JobError(
            _("the %(what)s job #%(id)s did not finish (%(status)s): %(error)s")
            % {"what": what, "id": step.pk, "status": step.status, "error": step.error or "-"}
        )
    Job.objects.filter(pk=job.pk).update(done=F("done") + 1)
    return step


def run_retrain(job: Job, params: RetrainParams) -> bool:
    """Train (the classifier, on the round's gold), prefill the round with what it trained, then
    compute the queue from the new parser's posteriors."""
    policy = _policy(job)
    round_ = policy.round
    Job.objects.filter(pk=job.pk).update(total=3, done=0)
    gold = resolved_gold(round_)
    train = _run_inline(
        job, job_train_start(user=job.created_by, round_=round_, method="classifier", enqueue=False), "train"
    )
    if job_stopped(job.pk):
        return False
    spec = (train.summary or {}).get("registered") or train.engine
    prefill = _run_inline(
        job, job_prefill_start(user=job.created_by, round_=round_, model=spec, enqueue=False), "prefill"
    )
    if job_stopped(job.pk):
        return False
    QueuePolicy.objects.filter(pk=policy.pk).update(parser=prefill.engine[:300], gold_at_retrain=gold)
    policy.refresh_from_db()
    result = queue_compute(policy=policy)
    Job.objects.filter(pk=job.pk).update(
        done=3,
        engine=prefill.engine[:300],
        summary={"train_job": train.pk, "prefill_job": prefill.pk, "gold": gold, "queue": result.as_dict()},
    )
    return True


def gold_examples(round_: Round) -> list[Example]:
    """The round's resolved gold (construal 1) as an oracle, with each item's reference label."""
    rows = (
        GoldConstrual.objects.filter(gold__round=round_, gold__status=GoldItem.Status.RESOLVED, index=1)
        .select_related("gold__item")
        .order_by("gold__item_id")
    )
    out = []
    for c in rows:
        item = c.gold.item
        if item.reference_label:
            out.append(
                Example(item.pk, item.text_for(round_.text_field), dict(c.slots), item.reference_label)
            )
    return out


def run_simulate(job: Job, params: SimulateParams) -> bool:
    examples = gold_examples(job.round)
    orders = (RANDOM, INFORMATIVE, MIXED)
    runs: dict[str, list[Any]] = {order: [] for order in orders}
    Job.objects.filter(pk=job.pk).update(total=len(orders) * params.seeds, done=0)
    try:
        for seed in range(params.seeds):
            for order in orders:
                if job_stopped(job.pk):
                    return False
                runs[order].append(
                    simulate(examples, order=order, seed=seed, start=params.start, batch=params.batch)
                )
                Job.objects.filter(pk=job.pk).update(done=F("done") + 1)
    except QueueError as error:
        raise JobError(str(error)) from None
    summary = summarise(runs)
    summary["items"] = len(examples)
    summary["seeds"] = params.seeds
    Job.objects.filter(pk=job.pk).update(summary=summary)
    return True


def job_queue_start(*, user: Any, round_: Round, enqueue: bool = True) -> Job:
    if not QueuePolicy.objects.filter(round=round_).exists():
        raise JobError(
            _("round %(round)s has no learning queue: set its order first") % {"round": round_.name}
        )
    return job_create(
        QUEUE,
        user=user,
        item_set=round_.item_set,
        round_=round_,
        key=QUEUE,
        params=QueueParams(),
        enqueue=enqueue,
    )


def job_retrain_start(*, user: Any, round_: Round, trigger: str = "asked", enqueue: bool = True) -> Job:
    if not QueuePolicy.objects.filter(round=round_).exists():
        raise JobError(
            _("round %(round)s has no learning queue: set its order first") % {"round": round_.name}
        )
    if not resolved_gold(round_):
        raise JobError(_("round %(round)s has no resolved gold to train on yet") % {"round": round_.name})
    return job_create(
        RETRAIN,
        user=user,
        item_set=round_.item_set,
        round_=round_,
        key=RETRAIN,
        params=RetrainParams(trigger=trigger),
        total=3,
        enqueue=enqueue,
    )


def job_simulate_start(*, user: Any, round_: Round, enqueue: bool = True, **values: Any) -> Job:
    params = SimulateParams.from_json({k: v for k, v in values.items() if v is not None})
    n = len(gold_examples(round_))
    if n < params.start + 3:
        raise JobError(
            _(
                "round %(round)s has %(n)s resolved gold items with a reference label: a simulation needs "
                "more than %(start)s to start from and a third held out"
            )
            % {"round": round_.name, "n": n, "start": params.start}
        )
    return job_create(
        SIMULATE,
        user=user,
        item_set=round_.item_set,
        round_=round_,
        key=f"{SIMULATE}|{params.seeds}|{params.start}|{params.batch}",
        params=params,
        total=3 * params.seeds,
        enqueue=enqueue,
    )


def describe_queue(job: Job, params: QueueParams) -> str:
    return format_html(_("learning queue of round {}"), job.round)


def describe_retrain(job: Job, params: RetrainParams) -> str:
    how = _("every N gold items") if params.trigger == "auto" else _("asked")
    return format_html(_("retrain the parser of round {} and recompute its queue ({})"), job.round, how)


def describe_simulate(job: Job, params: SimulateParams) -> str:
    return format_html(
        _("simulate the learning queue on round {}'s gold: {} seeds, start {}, batches of {}"),
        job.round,
        params.seeds,
        params.start,
        params.batch,
    )


job_kind_register(
    JobKind(
        name=QUEUE,
        label=gettext_lazy("Learning queue"),
        params=QueueParams,
        run=run_queue,
        describe=describe_queue,
        unit=gettext_lazy("steps"),
    )
)
job_kind_register(
    JobKind(
        name=RETRAIN,
        label=gettext_lazy("Retrain and requeue"),
        params=RetrainParams,
        run=run_retrain,
        describe=describe_retrain,
        unit=gettext_lazy("steps"),
    )
)


def simulation_context(job: Job) -> dict[str, Any]:
    summary = job.summary or {}
    if not summary.get("curves"):
        return {}
    return {
        "simulation": summary,
        "charts": [band_series(summary, "routed"), band_series(summary, "per_slot")],
    }


job_kind_register(
    JobKind(
        name=SIMULATE,
        label=gettext_lazy("Queue simulation"),
        params=SimulateParams,
        run=run_simulate,
        describe=describe_simulate,
        unit=gettext_lazy("runs"),
        status_template="learning/_simulation_status.html",
        status_context=simulation_context,
    )
)
