"""Admin pages: import items from a file (preview, then confirm), draw item sets."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

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
    ImportReport,
    detect_format,
    items_import,
    items_preview,
)
from annotator.models import ItemSet
from annotator.roles import ADMIN, require_role
from annotator.sampling import DrawError, item_set_draw


class ImportForm(forms.Form):
    file = forms.FileField(help_text="crowd-enVent TSV, JSONL or CSV")
    format = forms.ChoiceField(
        choices=[("", "from the file name")] + [(f, f) for f in FORMATS], required=False
    )
    source = forms.CharField(initial="crowd-enVent", max_length=64)


class DrawForm(forms.Form):
    name = forms.CharField(max_length=100)
    tier = forms.ChoiceField(choices=ItemSet.Tier.choices, initial=ItemSet.Tier.OTHER)
    seed = forms.IntegerField()
    per_stratum = forms.IntegerField(min_value=1, required=False, help_text="items per reference label")
    size = forms.IntegerField(min_value=1, required=False, help_text="or: this many items overall")
    disjoint_from = forms.ModelChoiceField(
        ItemSet.objects.all(), required=False, help_text="held-out set to avoid"
    )
    source = forms.CharField(max_length=64, required=False)

    def clean(self):
        data = super().clean()
        if bool(data.get("per_stratum")) == bool(data.get("size")):
            raise forms.ValidationError("give either a number per label or an overall size")
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
    report: ImportReport | None = None,
    problems: list | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "form": form,
        "preview": preview,
        "staged": staged,
        "report": report,
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
    source = form.cleaned_data["source"]
    if upload.size > MAX_UPLOAD:
        return _import_page(
            request, form, problems=[f"the file is larger than {MAX_UPLOAD // 1024 // 1024} MB"], status=400
        )
    try:
        fmt = form.cleaned_data["format"] or detect_format(upload.name)
    except ImportFileError as error:
        return _import_page(request, form, problems=error.problems, status=400)
    data = upload.read()
    preview = items_preview(data=data, fmt=fmt, source=source)
    if preview.problems:
        return _import_page(request, form, preview=preview, problems=preview.problems, status=400)
    staged = upload_stage(
        data=data, fmt=fmt, source=source, name=upload.name, owner_id=request.user.pk, digest=preview.digest
    )
    return _import_page(request, form, preview=preview, staged=staged)


@require_role(ADMIN)
@require_POST
def import_confirm(request: HttpRequest) -> HttpResponse:
    """Import the previewed upload: the same bytes (checked by their sha256), and only if it would
    still create the rows the preview showed."""
    confirm = ConfirmForm(request.POST)
    if not confirm.is_valid():
        missing = ", ".join(confirm.errors)
        return _import_page(
            request, ImportForm(), problems=[f"{missing}: missing; upload the file again"], status=400
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
    return _import_page(request, ImportForm(initial={"source": staged.source}), report=report)


@require_role(ADMIN)
def draw_item_set(request: HttpRequest) -> HttpResponse:
    form = DrawForm(request.POST or None)
    created = None
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
    elif request.method == "POST":
        status = 400
    item_sets = ItemSet.objects.select_related("disjoint_from").order_by("-created_at")[:50]
    return render(
        request,
        "annotator/manage_item_sets.html",
        {"form": form, "created": created, "item_sets": item_sets},
        status=status,
    )
