"""The form that starts a verification job (the Jobs page and the API: jobs.api.FormIn), the
check of an NLI model that the export's form shares, and the calibration pages' forms."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import Round
from jobs.forms import TargetMixin, target_choices
from jobs.models import Job
from nsmcore.verifier import VerifierUnavailable
from verification.verify import job_verify_start, verifier_available, verifier_setting_problem


class VerifyForm(TargetMixin, forms.Form):
    target = forms.ChoiceField(
        label=gettext_lazy("Target"),
        help_text=gettext_lazy("an item set (a parser's explications) or a round (its resolved gold)"),
    )
    parser = forms.CharField(
        required=False,
        max_length=300,
        label=gettext_lazy("Parser"),
        help_text=gettext_lazy("for an item set: the parser whose explications are checked"),
    )
    model = forms.CharField(
        required=False,
        max_length=250,
        label=gettext_lazy("Model"),
        help_text=gettext_lazy("NLI model name or local path; empty: NSM_VERIFIER_MODEL"),
    )
    text_field = forms.ChoiceField(
        choices=Round.TEXT_FIELDS, initial=Round.TEXT_GENERATED, label=gettext_lazy("Text field")
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = target_choices()
        self.fields["parser"].initial = "lexical"
        #: why the configured model cannot verify, naming the setting; or None. A model given in
        #: the form is used instead, so the form stays open.
        self.verify_off = verifier_setting_problem()

    def clean(self):
        data = super().clean()
        problem = model_problem(data.get("model", ""))
        if problem:
            self.add_error("model", problem)
        return data

    def start(self, *, user) -> Job:
        data = self.cleaned_data
        return job_verify_start(
            user=user, **self.scope(), parser=data["parser"].strip(), model=data["model"].strip(),
            text_field=data["text_field"],
        )  # fmt: skip


def model_problem(model: str) -> str | None:
    """Why the NLI model given (or, empty, the configured one) cannot verify, checked without
    loading it; None when it can."""
    try:
        verifier_available(model.strip())
    except VerifierUnavailable as error:
        return str(error)
    return None


class CalibrationQuery(forms.Form):
    """The calibration page's ?model=: one of the models with cached judgements of the round's texts
    (left out, the newest)."""

    model = forms.ChoiceField(required=False, label=gettext_lazy("Model"))

    def __init__(self, data, *, models: list[str]):
        super().__init__(data)
        self.fields["model"].choices = [("", _("the newest")), *((m, m) for m in models)]
        self.models = models

    def clean_model(self) -> str:
        return self.cleaned_data["model"] or (self.models[0] if self.models else "")


class JudgementMarkForm(forms.Form):
    """One gold line marked entailed or not on the judgements page (and the page to go back to)."""

    line = forms.CharField(max_length=5000)
    entailed = forms.ChoiceField(
        choices=[("yes", gettext_lazy("entailed")), ("no", gettext_lazy("not entailed"))],
        error_messages={
            "required": gettext_lazy("say entailed=yes or entailed=no"),
            "invalid_choice": gettext_lazy("say entailed=yes or entailed=no"),
        },
    )
    page = forms.IntegerField(min_value=1, required=False)
