"""Admin pages: import items from a file (preview, then confirm), draw item sets."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from annotator.import_staging import (
    MAX_UPLOAD,
    Staged,
    StagingError,
    upload_discard,
    upload_load,
    upload_stage,
)
from annotator.imports import (
    FORMATS,
    ImportFileError,
    ImportPreview,
    default_source,
    detect_format,
    items_import,
    items_preview,
)
from annotator.models import Item, ItemSet
from annotator.roles import ADMIN, require_role
from annotator.sampling import DrawError, item_set_draw
from annotator.search import items_searched, search_field


class ImportForm(forms.Form):
    file = forms.FileField(
        label=gettext_lazy("File"), help_text=gettext_lazy("crowd-enVent TSV, JSONL or CSV")
    )
    format = forms.ChoiceField(
        choices=[("", gettext_lazy("from the file name"))] + [(f, f) for f in FORMATS],
        required=False,
        label=gettext_lazy("Format"),
    )
    source = forms.CharField(
        max_length=64,
        required=False,
        label=gettext_lazy("Source"),
        help_text=gettext_lazy(
            "empty: crowd-enVent for a crowd-enVent TSV, the file's name for JSONL or CSV"
        ),
    )


class DrawForm(forms.Form):
    name = forms.CharField(max_length=100, label=gettext_lazy("Name"))
    tier = forms.ChoiceField(
        choices=ItemSet.Tier.choices, initial=ItemSet.Tier.OTHER, label=gettext_lazy("Tier")
    )
    seed = forms.IntegerField(label=gettext_lazy("Seed"))
    per_stratum = forms.IntegerField(
        min_value=1,
        required=False,
        label=gettext_lazy("Per stratum"),
        help_text=gettext_lazy("items per reference label"),
    )
    size = forms.IntegerField(
        min_value=1,
        required=False,
        label=gettext_lazy("Size"),
        help_text=gettext_lazy("or: this many items overall"),
    )
    disjoint_from = forms.ModelChoiceField(
        ItemSet.objects.all(),
        required=False,
        label=gettext_lazy("Disjoint from"),
        help_text=gettext_lazy("held-out set to avoid"),
    )
    source = forms.CharField(
        max_length=64,
        required=False,
        label=gettext_lazy("Source"),
        help_text=gettext_lazy("only items of this source; empty: all"),
    )

    def clean(self):
        data = super().clean()
        if bool(data.get("per_stratum")) == bool(data.get("size")):
            raise forms.ValidationError(_("give either a number per label or an overall size"))
        return data


class ConfirmForm(forms.Form):
    token = forms.CharField(max_length=64)
    sha256 = forms.CharField(max_length=64)


def _import_page(
    request: HttpRequest,
    form: ImportForm,
    *,
    preview: ImportPreview | None = None,
    staged: Staged | None = None,
    problems: list | None = None,
    fmt: str = "",
    file_name: str = "",
    status: int = 200,
) -> HttpResponse:
    context = {
        "form": form,
        "fmt": fmt,
        "file_name": file_name,
        "preview": preview,
        "staged": staged,
        "problems": problems or [],
    }
    return render(request, "annotator/manage_import.html", context, status=status)


@require_role(ADMIN)
def import_items(request: HttpRequest) -> HttpResponse:
    """Upload: check the file and show what it would import, writing no item. A clean file is
    kept (see import_staging) for the confirmation; a file with problems is not."""
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method != "POST":
        return _import_page(request, form)
    if not form.is_valid():
        return _import_page(request, form, status=400)
    upload = form.cleaned_data["file"]
    if upload.size > MAX_UPLOAD:
        return _import_page(
            request,
            form,
            problems=[_("the file is larger than %(mb)s MB") % {"mb": MAX_UPLOAD // 1024 // 1024}],
            status=400,
        )
    try:
        fmt = form.cleaned_data["format"] or detect_format(upload.name)
    except ImportFileError as error:
        return _import_page(request, form, problems=error.problems, status=400)
    source = form.cleaned_data["source"].strip() or default_source(fmt=fmt, filename=upload.name)
    data = upload.read()
    preview = items_preview(data=data, fmt=fmt, source=source)
    if preview.problems:
        return _import_page(request, form, preview=preview, problems=preview.problems, status=400)
    shown = {"preview": preview, "fmt": fmt, "file_name": upload.name}
    if not preview.new:
        # nothing to confirm, so nothing is kept for a confirmation
        return _import_page(request, form, **shown)
    staged = upload_stage(
        data=data, fmt=fmt, source=source, name=upload.name, owner_id=request.user.pk, digest=preview.digest
    )
    return _import_page(request, form, staged=staged, **shown)


@require_role(ADMIN)
@require_http_methods(["GET", "POST"])
def import_confirm(request: HttpRequest) -> HttpResponse:
    """Import the previewed upload: the same bytes (checked by their sha256), and only if it would
    still create the rows the preview showed. Success redirects to the import page (the summary
    shown once), so a reload there does not post the spent confirmation again; a GET of this
    URL (a bookmark, a reload after the redirect was lost) goes there too."""
    if request.method != "POST":
        return redirect("manage_import")
    confirm = ConfirmForm(request.POST)
    if not confirm.is_valid():
        missing = ", ".join(confirm.errors)
        return _import_page(
            request,
            ImportForm(),
            problems=[_("%(fields)s: missing; upload the file again") % {"fields": missing}],
            status=400,
        )
    token = confirm.cleaned_data["token"]
    try:
        staged, data = upload_load(
            token=token, sha256=confirm.cleaned_data["sha256"], owner_id=request.user.pk
        )
    except StagingError as error:
        return _import_page(request, ImportForm(), problems=[str(error)], status=400)
    try:
        report = items_import(data=data, fmt=staged.fmt, source=staged.source, expected=staged.digest)
    except ImportFileError as error:
        return _import_page(request, ImportForm(), problems=error.problems, status=400)
    finally:
        upload_discard(token=token)
    messages.success(request, report.summary(), extra_tags="import-report")
    return redirect("manage_import")


@require_role(ADMIN)
def draw_item_set(request: HttpRequest) -> HttpResponse:
    """Draw a set; success redirects here with "Drew ..." shown once and the form empty."""
    form = DrawForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            created = item_set_draw(
                name=data["name"],
                seed=data["seed"],
                tier=data["tier"],
                per_stratum=data["per_stratum"],
                size=data["size"],
                disjoint_from=data["disjoint_from"],
                source=data["source"],
                created_by=request.user,
            )
        except DrawError as error:
            form.add_error(None, str(error))
            status = 400
        else:
            messages.success(
                request,
                _("Drew %(name)s: %(size)s items (seed %(seed)s).")
                % {"name": created.name, "size": created.size, "seed": created.seed},
                extra_tags="draw-report",
            )
            return redirect("manage_item_sets")
    elif request.method == "POST":
        status = 400
    item_sets = ItemSet.objects.select_related("disjoint_from").order_by("-created_at")[:50]
    return render(
        request,
        "annotator/manage_item_sets.html",
        {"form": form, "item_sets": item_sets},
        status=status,
    )


class ItemSetQuery(forms.Form):
    """The item set page's query string: a search and a page."""

    q = search_field()
    page = forms.IntegerField(required=False, min_value=1)


@require_http_methods(["GET"])
@require_role(ADMIN)
def item_set_detail(request: HttpRequest, item_set_id: int) -> HttpResponse:
    """An item set opened: its items (id, label, text), searched and paged in the database."""
    item_set = get_object_or_404(ItemSet, pk=item_set_id)
    query = ItemSetQuery(request.GET)
    valid = query.is_valid()
    data = query.cleaned_data if valid else {"q": "", "page": None}
    items = Item.objects.filter(item_sets=item_set).order_by("source_id")
    shown = items_searched(items, data["q"]) if valid else items.none()
    page = Paginator(shown.only("pk", "source_id", "reference_label", "text", "masked_text"), 50).get_page(
        data["page"]
    )
    context = {"item_set": item_set, "page": page, "query": query, "q": data["q"], "size": item_set.size}
    return render(request, "annotator/item_set.html", context, status=200 if valid else 400)
