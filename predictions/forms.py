"""The form that starts a prefill job (the Jobs page). Models are chosen by name: a trained parser
from the registry's list, or a model name a server or the hub knows; never a folder on the server
(a folder is the settings' business, NSM_PARSER_MODEL, or the command line's)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

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
    spec = _("%(spec)s (newest)") % {"spec": parser.spec} if newest else parser.spec
    trained = {"spec": spec, "items": parser.trained_count}
    if held is None:
        return _("%(spec)s: trained on %(items)s items") % trained
    return _("%(spec)s: trained on %(items)s items, held-back accuracy %(accuracy)s") % {
        **trained,
        "accuracy": f"{held:.3f}",
    }


class PrefillForm(TargetMixin, forms.Form):
    target = forms.ChoiceField(
        label=gettext_lazy("Target"),
        help_text=gettext_lazy("a round's items are read in the round's text field"),
    )
    backend = forms.ChoiceField(choices=backend_choices, label=gettext_lazy("Backend"))
    parser = forms.ChoiceField(
        required=False,
        label=gettext_lazy("Trained parser"),
        widget=ParserSelect,
        help_text=gettext_lazy(
            "a parser trained here, by name (the Parsers page compares them); its backend goes with it"
        ),
    )
    model = forms.CharField(
        required=False,
        max_length=250,
        label=gettext_lazy("Model name"),
        help_text=gettext_lazy(
            "transformers: a hub model's name; OpenAI-compatible: a model the server serves; empty: "
            "the setting (NSM_PARSER_MODEL or NSM_OPENAI_MODEL). A name, not a folder: a trained model is "
            "chosen above"
        ),
    )
    mode = forms.ChoiceField(
        choices=[
            ("", gettext_lazy("from settings")),
            ("schema", gettext_lazy("JSON schema")),
            ("free", gettext_lazy("free decoding")),
        ],
        required=False,
        label=gettext_lazy("Mode"),
        help_text=gettext_lazy("OpenAI-compatible servers only; free decoding measures legality"),
    )
    # the masked text by default: the generated text names the emotion, and a parser that reads it
    # prefills from the answer (a round's items are read in the round's field whatever this says)
    text_field = forms.ChoiceField(
        choices=Round.TEXT_FIELDS, initial=Round.TEXT_MASKED, label=gettext_lazy("Text field")
    )
    overwrite = forms.BooleanField(
        required=False,
        label=gettext_lazy("Overwrite"),
        help_text=gettext_lazy("parse again items that already have a prediction"),
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
        self.fields["parser"].choices = [("", _("none: the backend's setting")), *groups.items()]
        self.fields["parser"].widget.backends = {p.spec: p.backend for p in registered}
        # the best registered parser, else the settings' backend (predictions.parsers.default_prefill)
        backend, model = default_prefill()
        self.fields["backend"].initial = backend
        if model:  # a registered parser's spec (or the classifier setting's folder, left to it)
            best = model if any(p.spec == model for p in registered) else ""
            self.fields["parser"].initial = best
            if best:
                self.fields["parser"].help_text = _(
                    "the best registered parser is %(best)s (the Parsers page says why); %(help)s"
                ) % {"best": best, "help": self.fields["parser"].help_text}

    def clean(self):
        data = super().clean()
        backend, parser = data.get("backend"), data.get("parser") or ""
        model = (data.get("model") or "").strip()
        if parser and model:
            self.add_error("model", _("give a trained parser or a model name, not both"))
            return data
        if parser:
            chosen = self.fields["parser"].widget.backends[parser]
            if backend and backend != chosen:
                self.add_error(
                    "parser",
                    _("%(spec)s is a %(backend)s parser: choose the backend %(backend)s for it")
                    % {"spec": parser, "backend": chosen},
                )
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
