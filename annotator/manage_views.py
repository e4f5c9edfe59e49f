"""Admin pages: import items from a file, draw item sets."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotator.imports import FORMATS, ImportFileError, detect_format, items_import
from annotator.models import ItemSet
from annotator.roles import ADMIN, require_role
from annotator.sampling import DrawError, item_set_draw

MAX_UPLOAD = 50 * 1024 * 1024


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


@require_role(ADMIN)
def import_items(request: HttpRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    report = None
    problems: list = []
    status = 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > MAX_UPLOAD:
                raise ImportFileError([])
            fmt = form.cleaned_data["format"] or detect_format(upload.name)
            report = items_import(data=upload.read(), fmt=fmt, source=form.cleaned_data["source"])
        except ImportFileError as error:
            problems = error.problems or [f"the file is larger than {MAX_UPLOAD // 1024 // 1024} MB"]
            status = 400
    elif request.method == "POST":
        status = 400
    return render(
        request,
        "annotator/manage_import.html",
        {"form": form, "report": report, "problems": problems},
        status=status,
    )


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
