"""Admin pages: start a prefill, a verification or a training job, watch any job's progress, cancel or resume
it; start an export and download its archive."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from annotator.models import ItemSet, Round
from annotator.roles import ADMIN, require_role
from jobs.export import EXPORT, export_start
from jobs.forms import ExportForm, PrefillForm, TrainForm, VerifyForm
from jobs.kinds import KINDS, JobError
from jobs.models import Export, Job
from jobs.prefill import PREFILL, job_prefill_start
from jobs.selectors import jobs_recent, legality_report
from jobs.services import JobConflict, job_cancel, job_resume
from jobs.training import job_train_start
from jobs.verification import job_verify_start


@require_role(ADMIN)
def job_list(request: HttpRequest) -> HttpResponse:
    form = PrefillForm(request.POST or None)
    started = _submit(
        request,
        form,
        lambda data: job_prefill_start(
            user=request.user,
            **_scope(data["target"]),
            backend=data["backend"],
            model=data["model"].strip(),
            mode=data["mode"],
            adapter=data["adapter"].strip(),
            text_field=data["text_field"],
            overwrite=data["overwrite"],
        ),
    )
    if isinstance(started, HttpResponse):
        return started
    context = {"form": form, "verify_form": VerifyForm(), "train_form": TrainForm(), "jobs": jobs_recent()}
    return render(request, "jobs/list.html", context, status=started)


@require_POST
@require_role(ADMIN)
def job_verify(request: HttpRequest) -> HttpResponse:
    """Start an NLI verification job; an unusable model is refused here, before any job exists."""
    form = VerifyForm(request.POST)
    started = _submit(
        request,
        form,
        lambda data: job_verify_start(
            user=request.user,
            **_scope(data["target"]),
            parser=data["parser"].strip(),
            model=data["model"].strip(),
            text_field=data["text_field"],
        ),
    )
    if isinstance(started, HttpResponse):
        return started
    context = {"form": PrefillForm(), "verify_form": form, "train_form": TrainForm(), "jobs": jobs_recent()}
    return render(request, "jobs/list.html", context, status=started)


@require_POST
@require_role(ADMIN)
def job_train(request: HttpRequest) -> HttpResponse:
    """Start a train job; held-out items, a missing base model folder or bad settings are refused
    here (400, named), before any job exists."""
    form = TrainForm(request.POST)
    started = _submit(
        request,
        form,
        lambda data: job_train_start(user=request.user, **_scope(data["target"]), **form.params()),
    )
    if isinstance(started, HttpResponse):
        return started
    context = {"form": PrefillForm(), "verify_form": VerifyForm(), "train_form": form, "jobs": jobs_recent()}
    return render(request, "jobs/list.html", context, status=started)


def _scope(target: ItemSet | Round) -> dict:
    """A form's target as the services take it."""
    return {"round_": target} if isinstance(target, Round) else {"item_set": target}


def _submit(request: HttpRequest, form, start: Callable[[dict], Job]) -> HttpResponse | int:
    """A form that starts a job: on a valid POST, a redirect to the job's page; otherwise the
    status to answer the page with (200 on GET, 400 with the reason on the form, 409 when the
    same job is already active, with a link to it)."""
    if request.method != "POST":
        return 200
    if not form.is_valid():
        return 400
    try:
        job = start(form.cleaned_data)
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
    """Start an EmoExpl export; the history of every export, with downloads."""
    form = ExportForm(request.POST or None)
    started = _submit(
        request,
        form,
        lambda data: export_start(
            user=request.user, round_=data["round"], model=data["model"].strip(), verify=data["verify"]
        ),
    )
    if isinstance(started, HttpResponse):
        return started
    exports = Export.objects.select_related("round", "created_by", "job")
    running = Job.objects.filter(kind=EXPORT, status__in=("queued", "running")).select_related("round")
    context = {"form": form, "exports": exports, "running": running}
    return render(request, "jobs/exports.html", context, status=started)


@require_role(ADMIN)
def export_download(request: HttpRequest, export_id: int) -> FileResponse:
    export = get_object_or_404(Export, pk=export_id)
    if not export.path.is_file():
        raise Http404(f"{export.filename} is no longer on the server; export again to make it")
    return FileResponse(export.path.open("rb"), as_attachment=True, filename=export.filename)
