"""Admin pages: start a prefill, a verification or a training job, watch any job's progress, cancel or resume
it; start an export (the EmoExpl gold archive, or a round's raw annotations) and download its file."""

from __future__ import annotations

from django.contrib import messages
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from annotator.roles import ADMIN, require_role
from jobs.downloads import export_file_response
from jobs.export import EXPORT
from jobs.forms import ExportForm, PrefillForm, RawExportForm, TrainForm, VerifyForm
from jobs.kinds import KINDS, JobError
from jobs.models import Export, Job
from jobs.prefill import PREFILL
from jobs.raw_export import RAW_EXPORT
from jobs.selectors import jobs_recent, legality_report
from jobs.services import JobConflict, job_cancel, job_resume
from registry.selectors import parsers_list


@require_role(ADMIN)
def job_list(request: HttpRequest) -> HttpResponse:
    form = PrefillForm(request.POST or None)
    started = _submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    context = {
        "form": form,
        "verify_form": VerifyForm(),
        "train_form": TrainForm(),
        "jobs": jobs_recent(),
        "registered_parsers": parsers_list().defer("card", "trained_on"),
    }
    return render(request, "jobs/list.html", context, status=started)


@require_POST
@require_role(ADMIN)
def job_verify(request: HttpRequest) -> HttpResponse:
    """Start an NLI verification job; an unusable model is refused here, before any job exists."""
    form = VerifyForm(request.POST)
    started = _submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    context = {
        "form": PrefillForm(),
        "verify_form": form,
        "train_form": TrainForm(),
        "jobs": jobs_recent(),
        "registered_parsers": parsers_list().defer("card", "trained_on"),
    }
    return render(request, "jobs/list.html", context, status=started)


@require_POST
@require_role(ADMIN)
def job_train(request: HttpRequest) -> HttpResponse:
    """Start a train job; held-out items, a missing base model folder or bad settings are refused
    here (400, named), before any job exists."""
    form = TrainForm(request.POST)
    started = _submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    context = {
        "form": PrefillForm(),
        "verify_form": VerifyForm(),
        "train_form": form,
        "jobs": jobs_recent(),
        "registered_parsers": parsers_list().defer("card", "trained_on"),
    }
    return render(request, "jobs/list.html", context, status=started)


def _submit(request: HttpRequest, form) -> HttpResponse | int:
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
        messages.warning(request, format_html('{} <a href="{}">Watch it</a>.', str(conflict), url))
        return 409
    except JobError as error:
        form.add_error(None, str(error))
        return 400
    return redirect("job_detail", job.pk)


def _status_context(job: Job) -> dict:
    """The job, its typed parameters (None, with the reason in ``params_error``, when the stored
    ones do not read) and, for a finished prefill, its legality report."""
    try:
        params, params_error = job.typed_params, ""
    except JobError as error:
        params, params_error = None, str(error)
    report = None if job.is_active or job.kind != PREFILL else legality_report(job)
    kind = KINDS.get(job.kind)
    extra = kind.status_context(job) if kind and kind.status_context and params is not None else {}
    return {"job": job, "params": params, "params_error": params_error, "report": report, **extra}


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


@require_role(ADMIN)
def export_list(request: HttpRequest) -> HttpResponse:
    """Start an EmoExpl export; the history of every export (of both kinds), with downloads."""
    form = ExportForm(request.POST or None)
    started = _submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    return _exports_page(request, form, RawExportForm(), started)


@require_POST
@require_role(ADMIN)
def export_raw(request: HttpRequest) -> HttpResponse:
    """Start a raw-annotation export of one round (every revision, JSONL or CSV)."""
    form = RawExportForm(request.POST)
    started = _submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    return _exports_page(request, ExportForm(), form, started)


def _exports_page(
    request: HttpRequest, form: ExportForm, raw_form: RawExportForm, status: int
) -> HttpResponse:
    exports = Export.objects.select_related("round", "created_by", "job")
    running = Job.objects.filter(
        kind__in=(EXPORT, RAW_EXPORT), status__in=("queued", "running")
    ).select_related("round")
    context = {"form": form, "raw_form": raw_form, "exports": exports, "running": running}
    return render(request, "jobs/exports.html", context, status=status)


@require_role(ADMIN)
def export_download(request: HttpRequest, export_id: int) -> FileResponse:
    return export_file_response(get_object_or_404(Export, pk=export_id))
