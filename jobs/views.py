"""Admin pages: the jobs of every kind with a form to start each registered kind (its feature app
names the form: jobs.kinds.JobKind.form), a job's progress, cancel and resume."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotator.roles import ADMIN, require_role
from jobs.kinds import JobError, JobKind, kinds_startable, registered_kind
from jobs.models import Job
from jobs.selectors import jobs_recent
from jobs.services import JobConflict, job_cancel, job_resume

#: the template of a start form whose kind names none
START_FORM_TEMPLATE = "jobs/_start_form.html"


def start_form(kind: JobKind, data=None):
    """The form that starts a job of this kind, bound to ``data`` when given. Its ids carry the
    kind's name (``id_verify_target``): every kind's form is on one page, and a repeated id leaves
    a control unlabelled (its label focuses the first control of that id)."""
    return import_string(kind.form)(data, auto_id=f"id_{kind.name}_%s")


def _jobs_page(request: HttpRequest, posted: JobKind | None = None, form=None, status: int = 200):
    """The job list, and below it each registered kind's start form in its own disclosure (the
    one just refused, open, with its errors)."""
    if form is not None:  # the refused form: its first field at fault takes the focus
        first = next((name for name in form.errors if name in form.fields), None)
        if first is not None:
            form.fields[first].widget.attrs["autofocus"] = True
    starts = []
    for kind in kinds_startable():
        bound = form if kind is posted else start_form(kind)
        starts.append({
            "kind": kind, "form": bound, "open": kind is posted,
            "action": reverse("job_start", args=[kind.name]),
            "template": kind.form_template or START_FORM_TEMPLATE,
        })  # fmt: skip
    return render(request, "jobs/list.html", {"jobs": jobs_recent(), "starts": starts}, status=status)


@require_role(ADMIN)
def job_list(request: HttpRequest) -> HttpResponse:
    return _jobs_page(request)


@require_POST
@require_role(ADMIN)
def job_start(request: HttpRequest, kind: str) -> HttpResponse:
    """Start a job of a registered kind with its form; a refusal (400 naming the field, 409 when
    the same job is active) shows the Jobs page with that form open."""
    job_kind = registered_kind(kind)
    if job_kind is None or not job_kind.form:
        raise Http404(f"no job kind {kind!r} is started from this page")
    form = start_form(job_kind, request.POST)
    started = form_submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    return _jobs_page(request, job_kind, form, started)


def form_submit(request: HttpRequest, form) -> HttpResponse | int:
    """A form that starts a job (its ``start``): on a valid POST, a redirect to the job's page; otherwise the
    status to answer the page with (200 on GET, 400 with the reason on the form, 409 when the
    same job is already active, with a link to it)."""
    if request.method != "POST":
        return 200
    if not form.is_valid():
        return 400
    try:
        job = form.start(user=request.user)
    except JobConflict as conflict:
        url = reverse("job_detail", args=[conflict.job.pk])
        messages.warning(
            request,
            format_html(_('{conflict} <a href="{url}">Watch it</a>.'), conflict=str(conflict), url=url),
        )
        return 409
    except JobError as error:
        form.add_error(None, str(error))
        return 400
    return redirect("job_detail", job.pk)


def _status_context(job: Job) -> dict:
    """The job, its typed parameters (None, with the reason in ``params_error``, when the stored
    ones do not read) and what its kind adds (a prefill's legality report, a training's curve...)."""
    try:
        params, params_error = job.typed_params, ""
    except JobError as error:
        params, params_error = None, str(error)
    kind = registered_kind(job.kind)
    extra = kind.status_context(job) if kind and kind.status_context and params is not None else {}
    page, label = kind.results_page if kind else ("", "")
    results = {"url": reverse(page), "label": label} if page else None
    return {"job": job, "params": params, "params_error": params_error, "results": results, **extra}


@require_role(ADMIN)
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.select_related("item_set", "round", "created_by"), pk=job_id)
    return render(request, "jobs/detail.html", _status_context(job))


@require_role(ADMIN)
def job_status(request: HttpRequest, job_id: int) -> HttpResponse:
    """The progress fragment the detail page polls while the job is active."""
    job = get_object_or_404(Job.objects.select_related("item_set", "round"), pk=job_id)
    return render(request, "jobs/_status.html", _status_context(job))


@require_POST
@require_role(ADMIN)
def job_cancel_view(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    refused = ""
    try:
        job = job_cancel(job=job)
    except JobError as error:
        refused = str(error)
    if request.htmx:
        # the reason goes into the swapped fragment: a flash message would only show on some later
        # page, beside whatever that page says
        job = get_object_or_404(Job.objects.select_related("item_set", "round"), pk=job_id)
        context = {**_status_context(job), "refused": refused}
        return render(request, "jobs/_status.html", context)
    if refused:
        messages.error(request, refused)
    return redirect("job_detail", job_id)


@require_POST
@require_role(ADMIN)
def job_resume_view(request: HttpRequest, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job, pk=job_id)
    try:
        job_resume(job=job)
    except JobError as error:
        messages.error(request, str(error))
    return redirect("job_detail", job_id)
