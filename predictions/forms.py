"""The form that starts a prefill job (the Jobs page). Models are chosen by name: a trained parser
from the registry's list, or a model name a server or the hub knows; never a folder on the server
(a folder is the settings' business, NSM_PARSER_MODEL, or the command line's)."""

from __future__ import annotations

from django import forms

from annotator.models import Round
from jobs.forms import TargetMixin, target_choices
from jobs.models import Job
from predictions.parsers import backend_choices, default_prefill, model_name_problem
from predictions.prefill import job_prefill_start
from registry.models import RegisteredParser
from registry.selectors import parsers_list


class ParserSelect(forms.Select):
    """Options carrying their parser's backend (``data-backend``): choosing one sets the backend
    select to it (static/js/jobs.js)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.backends: dict[str, str] = {}

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        if value in self.backends:
            option["attrs"]["data-backend"] = self.backends[value]
        return option


def parser_option(parser: RegisteredParser, newest: bool) -> str:
    held = parser.validation_accuracy
    accuracy = f", held-back accuracy {held:.3f}" if held is not None else ""
    return f"{parser.spec}{' (newest)' if newest else ''}: trained on {parser.trained_count} items{accuracy}"


class PrefillForm(TargetMixin, forms.Form):
    target = forms.ChoiceField(help_text="a round's items are read in the round's text field")
    backend = forms.ChoiceField(choices=backend_choices)
    parser = forms.ChoiceField(
        required=False,
        label="Trained parser",
        widget=ParserSelect,
        help_text="a parser trained here, by name (the Parsers page compares them); its backend goes with it",
    )
    model = forms.CharField(
        required=False,
        max_length=250,
        label="Model name",
        help_text="transformers: a hub model's name; OpenAI-compatible: a model the server serves; empty: "
        "the setting (NSM_PARSER_MODEL or NSM_OPENAI_MODEL). A name, not a folder: a trained model is "
        "chosen above",
    )
    mode = forms.ChoiceField(
        choices=[("", "from settings"), ("schema", "JSON schema"), ("free", "free decoding")],
        required=False,
        help_text="OpenAI-compatible servers only; free decoding measures legality",
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
        registered = list(parsers_list().defer("card", "trained_on"))
        groups: dict[str, list[tuple[str, str]]] = {}
        seen: set[str] = set()
        for p in registered:  # by name, newest version first
            option = (p.spec, parser_option(p, newest=p.name not in seen))
            groups.setdefault(p.get_backend_display(), []).append(option)
            seen.add(p.name)
        self.fields["parser"].choices = [("", "none: the backend's setting"), *groups.items()]
        self.fields["parser"].widget.backends = {p.spec: p.backend for p in registered}
        # the best registered parser, else the settings' backend (predictions.parsers.default_prefill)
        backend, model = default_prefill()
        self.fields["backend"].initial = backend
        if model:  # a registered parser's spec (or the classifier setting's folder, left to it)
            best = model if any(p.spec == model for p in registered) else ""
            self.fields["parser"].initial = best
            if best:
                self.fields["parser"].help_text = (
                    f"the best registered parser is {best} (the Parsers page says why); "
                    + self.fields["parser"].help_text
                )

    def clean(self):
        data = super().clean()
        backend, parser = data.get("backend"), data.get("parser") or ""
        model = (data.get("model") or "").strip()
        if parser and model:
            self.add_error("model", "give a trained parser or a model name, not both")
            return data
        if parser:
            chosen = self.fields["parser"].widget.backends[parser]
            if backend and backend != chosen:
                self.add_error("parser", f"{parser} is a {chosen} parser: choose the backend {chosen} for it")
        elif model and backend:
            problem = model_name_problem(backend, model)
            if problem:
                self.add_error("model", problem)
        data["model"] = parser or model
        return data

    def start(self, *, user) -> Job:
        data = self.cleaned_data
        return job_prefill_start(
            user=user, **self.scope(), backend=data["backend"], model=data["model"],
            mode=data["mode"], text_field=data["text_field"], overwrite=data["overwrite"],
        )  # fmt: skip
