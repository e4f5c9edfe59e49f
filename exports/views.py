"""Admin pages of the exports app: start an export (the EmoExpl gold archive, or a round's raw
annotations), the history of every export, and its file."""

from __future__ import annotations

from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotator.roles import ADMIN, require_role
from exports.downloads import export_file_response
from exports.export import EXPORT
from exports.forms import ExportForm, RawExportForm
from exports.models import Export
from exports.raw_export import RAW_EXPORT
from jobs.models import Job
from jobs.views import form_submit

#: each form's ids, apart from the other form's on the same page (both name a round)
EXPORT_IDS = "id_export_%s"
RAW_IDS = "id_rawexport_%s"


@require_role(ADMIN)
def export_list(request: HttpRequest) -> HttpResponse:
    """Start an EmoExpl export; the history of every export (of both kinds), with downloads."""
    form = ExportForm(request.POST or None, auto_id=EXPORT_IDS)
    started = form_submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    return _exports_page(request, form, RawExportForm(auto_id=RAW_IDS), started)


@require_POST
@require_role(ADMIN)
def export_raw(request: HttpRequest) -> HttpResponse:
    """Start a raw-annotation export of one round (every revision, JSONL or CSV)."""
    form = RawExportForm(request.POST, auto_id=RAW_IDS)
    started = form_submit(request, form)
    if isinstance(started, HttpResponse):
        return started
    return _exports_page(request, ExportForm(auto_id=EXPORT_IDS), form, started)


def _exports_page(
    request: HttpRequest, form: ExportForm, raw_form: RawExportForm, status: int
) -> HttpResponse:
    exports = Export.objects.select_related("round", "created_by", "job")
    running = Job.objects.filter(
        kind__in=(EXPORT, RAW_EXPORT), status__in=("queued", "running")
    ).select_related("round")
    context = {
        "form": form, "raw_form": raw_form, "exports": exports, "running": running,
        "export_action": reverse("exports"), "raw_action": reverse("export_raw"),
    }  # fmt: skip
    return render(request, "exports/exports.html", context, status=status)


@require_role(ADMIN)
def export_download(request: HttpRequest, export_id: int) -> FileResponse:
    return export_file_response(get_object_or_404(Export, pk=export_id))
