"""The forms that start an export: the EmoExpl gold archive and a round's raw annotations (the
Exports page, the Jobs page and the API: jobs.api.FormIn)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import Round
from exports.export import export_start
from exports.raw_export import FORMATS, raw_export_start
from jobs.models import Job
from verification.forms import model_problem
from verification.verify import verifier_setting_problem


class ExportForm(forms.Form):
    round = forms.ModelChoiceField(
        queryset=Round.objects.order_by("name"),
        required=False,
        label=gettext_lazy("Round"),
        empty_label=gettext_lazy("the whole gold corpus"),
        help_text=gettext_lazy(
            "empty: the whole gold corpus; resolved gold items only, open ones are left out until resolved"
        ),
    )
    verify = forms.BooleanField(
        required=False,
        initial=True,
        label=gettext_lazy("Verify every line"),
        help_text=gettext_lazy(
            "judgements already cached are reused; the rest are computed during the export"
        ),
    )
    model = forms.CharField(
        required=False,
        max_length=250,
        label=gettext_lazy("Model"),
        help_text=gettext_lazy("NLI model name or local path; empty: NSM_VERIFIER_MODEL"),
    )
    hf = forms.BooleanField(
        required=False,
        label=gettext_lazy("Also write a Hugging Face datasets folder"),
        help_text=gettext_lazy(
            "a zip beside the archive that datasets.load_dataset reads: gold, contrast and raw configs "
            "with a dataset card"
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        #: why the configured model cannot verify, naming the setting; or None. Then the box starts
        #: unticked (an export without verification); ticked, it needs a model given here.
        self.verify_off = verifier_setting_problem()
        if self.verify_off:
            self.fields["verify"].initial = False

    def clean(self):
        data = super().clean()
        if data.get("verify"):
            model = data.get("model", "")
            problem = model_problem(model)
            if problem:
                field = "model" if model.strip() else "verify"
                self.add_error(field, _("%(problem)s; or export without verification") % {"problem": problem})
        return data

    def start(self, *, user) -> Job:
        data = self.cleaned_data
        return export_start(
            user=user,
            round_=data["round"],
            model=data["model"].strip(),
            verify=data["verify"],
            hf=data.get("hf", False),
        )


class RawExportForm(forms.Form):
    """A round's raw annotations (exports.raw_export): every revision of every annotator."""

    round = forms.ModelChoiceField(
        queryset=Round.objects.order_by("name"), empty_label=None, label=gettext_lazy("Round")
    )
    format = forms.ChoiceField(
        choices=[(f, f.upper()) for f in FORMATS],
        initial=FORMATS[0],
        label=gettext_lazy("Format"),
        help_text=gettext_lazy(
            "JSONL: one JSON object per revision; CSV: a header row and one column per slot"
        ),
    )

    def start(self, *, user) -> Job:
        return raw_export_start(
            user=user, round_=self.cleaned_data["round"], format=self.cleaned_data["format"]
        )
