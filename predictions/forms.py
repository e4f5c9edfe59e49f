"""The form that starts a prefill job (the Jobs page and the API: jobs.api.FormIn)."""

from __future__ import annotations

from django import forms

from annotator.models import Round
from jobs.forms import TargetMixin, target_choices
from jobs.models import Job
from predictions.parsers import backend_choices, default_prefill
from predictions.prefill import job_prefill_start
from registry.selectors import parsers_list


class PrefillForm(TargetMixin, forms.Form):
    target = forms.ChoiceField(help_text="a round's items are read in the round's text field")
    backend = forms.ChoiceField(choices=backend_choices)
    model = forms.CharField(
        required=False,
        max_length=250,
        help_text="classifier: a registered parser by name (the list offers them; NAME is its newest "
        "version); others: a model name or folder; empty: the setting (NSM_PARSER_MODEL or NSM_OPENAI_MODEL)",
        widget=forms.TextInput(attrs={"list": "registered-parsers", "autocomplete": "off"}),
    )
    mode = forms.ChoiceField(
        choices=[("", "from settings"), ("schema", "JSON schema"), ("free", "free decoding")],
        required=False,
        help_text="OpenAI-compatible servers only; free decoding measures legality",
    )
    adapter = forms.CharField(
        required=False,
        max_length=250,
        help_text="transformers only: a LoRA adapter folder over the model (a train job's output); "
        "empty: NSM_PARSER_ADAPTER when the model is the setting's",
    )
    # the masked text by default: the generated text names the emotion, and a parser that reads it
    # prefills from the answer (a round's items are read in the round's field whatever this says)
    text_field = forms.ChoiceField(choices=Round.TEXT_FIELDS, initial=Round.TEXT_MASKED)
    overwrite = forms.BooleanField(
        required=False, help_text="parse again items that already have a prediction"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = target_choices()
        # the best registered parser, else the settings' backend (predictions.parsers.default_prefill)
        backend, model = default_prefill()
        self.fields["backend"].initial, self.fields["model"].initial = backend, model
        if model:
            self.fields["model"].help_text = (
                f"the best registered parser is {model} (the Parsers page says why); "
                + self.fields["model"].help_text
            )

    def registered_parsers(self):
        """The parsers the model field offers (its datalist)."""
        return parsers_list().defer("card", "trained_on")

    def start(self, *, user) -> Job:
        data = self.cleaned_data
        return job_prefill_start(
            user=user, **self.scope(), backend=data["backend"], model=data["model"].strip(),
            mode=data["mode"], adapter=data["adapter"].strip(), text_field=data["text_field"],
            overwrite=data["overwrite"],
        )  # fmt: skip
