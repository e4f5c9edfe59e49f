"""The learning queue's pages: a round's queue (its settings, the ranked items and why, the random
share's unbiased figures, the jobs that compute it), its CSV, and the simulation's chart.
Adjudicators and admins read; admins change the settings and start the jobs."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from adjudication.downloads import csv_response
from annotator.csv_cells import fixed
from annotator.models import Round
from annotator.roles import ADJUDICATOR, ADMIN, require_role, user_roles
from jobs.kinds import JobError
from learning.forms import QueuePolicyForm, SimulateForm
from learning.jobs import job_queue_start, job_retrain_start, job_simulate_start, simulation_context
from learning.models import SIMULATE, QueuePolicy
from learning.selectors import newest_jobs, queue_entries, queue_policy, queue_state
from learning.services import QueuePolicyError, queue_clear, queue_policy_set

PAGE = 50


def _round(round_id: int) -> Round:
    return get_object_or_404(Round.objects.select_related("item_set"), pk=round_id)


def simulation_charts(job) -> dict:
    """The simulation job's two charts (its status block and the queue page draw them)."""
    return simulation_context(job) if job.kind == SIMULATE else {}


@require_role(ADJUDICATOR, ADMIN)
def queue_page(request: HttpRequest, round_id: int) -> HttpResponse:
    """GET: the queue. POST (admins): new settings, then a job computes the queue (400 naming the
    problem, nothing changed)."""
    round_ = _round(round_id)
    if request.method != "POST":
        return _render(request, round_)
    if ADMIN not in user_roles(request.user):
        return HttpResponse(_("Only admins change a round's queue."), status=403)
    form = QueuePolicyForm(request.POST, round_=round_)
    if form.is_valid():
        try:
            with transaction.atomic():  # settings and their job together, or neither
                policy = queue_policy_set(round_=round_, user=request.user, **form.cleaned_data)
                job = job_queue_start(user=request.user, round_=round_)
                QueuePolicy.objects.filter(pk=policy.pk).update(job=job)
        except (QueuePolicyError, JobError) as error:
            form.add_error(getattr(error, "field", "") or None, str(error))
        else:
            messages.success(request, _("Queue settings saved: the queue is being computed."))
            return redirect("learning_queue", round_.pk)
    return _render(request, round_, form=form, status=400)


def _render(
    request: HttpRequest,
    round_: Round,
    *,
    form: QueuePolicyForm | None = None,
    status: int = 200,
    problem: str = "",
) -> HttpResponse:
    policy = queue_policy(round_)
    if form is None:
        fields = ("order", "random_share", "seed", "parser", "retrain_every")
        initial = {k: getattr(policy, k) for k in fields} if policy else {}
        form = QueuePolicyForm(initial=initial, round_=round_)
    jobs = newest_jobs(round_)
    page = None
    if policy is not None:
        page = Paginator(queue_entries(policy), PAGE).get_page(request.GET.get("page"))
    context = {
        "round": round_,
        "policy": policy,
        "state": queue_state(policy) if policy else None,
        "page": page,
        "form": form,
        "simulate_form": SimulateForm(request.POST if problem and "seeds" in request.POST else None),
        "is_admin": ADMIN in user_roles(request.user),
        "jobs": [j for j in jobs.values() if j is not None],
        "simulation": simulation_charts(jobs[SIMULATE]) if jobs[SIMULATE] else {},
        "problem": problem,
    }
    return render(request, "learning/queue.html", context, status=status)


def _start(request: HttpRequest, round_id: int, start) -> HttpResponse:
    round_ = _round(round_id)
    try:
        job = start(round_)
    except JobError as error:
        return _render(request, round_, status=400, problem=str(error))
    if job.kind != SIMULATE:
        QueuePolicy.objects.filter(round=round_).update(job=job)
    messages.success(request, _("Job #%(id)s started.") % {"id": job.pk})
    return redirect("job_detail", job.pk)


@require_role(ADMIN)
@require_POST
def queue_recompute(request: HttpRequest, round_id: int) -> HttpResponse:
    return _start(request, round_id, lambda r: job_queue_start(user=request.user, round_=r))


@require_role(ADMIN)
@require_POST
def queue_retrain(request: HttpRequest, round_id: int) -> HttpResponse:
    return _start(request, round_id, lambda r: job_retrain_start(user=request.user, round_=r))


@require_role(ADMIN)
@require_POST
def queue_simulate(request: HttpRequest, round_id: int) -> HttpResponse:
    form = SimulateForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
        return _render(request, _round(round_id), status=400, problem=problems)
    return _start(
        request, round_id, lambda r: job_simulate_start(user=request.user, round_=r, **form.cleaned_data)
    )


@require_role(ADMIN)
@require_POST
def queue_off(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = _round(round_id)
    queue_clear(round_=round_)
    messages.success(request, _("The round has no learning queue now; its items keep their last order."))
    return redirect("learning_queue", round_.pk)


@require_role(ADJUDICATOR, ADMIN)
def queue_csv(request: HttpRequest, round_id: int) -> HttpResponse:
    round_ = _round(round_id)
    policy = queue_policy(round_)
    header = (
        "rank", "item_id", "source_id", "score", "change", "conflict", "rejected", "label", "random",
        "weight", "posteriors",
    )  # fmt: skip
    entries = queue_entries(policy).iterator(chunk_size=2000) if policy is not None else ()
    rows = (
        (e.rank, e.item_id, e.item.source_id, fixed(e.score, 6), fixed(e.change, 6), fixed(e.conflict, 6),
         fixed(e.rejected, 6), e.label, int(e.random), fixed(e.weight, 6), int(e.posteriors))
        for e in entries
    )  # fmt: skip
    return csv_response(f"queue-round-{round_.pk}", header, rows)
