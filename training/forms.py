"""The form that starts a train job (the Jobs page and the API: jobs.api.FormIn)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from jobs.forms import TargetMixin, setting_field, target_choices
from jobs.models import Job
from training.defaults import default_train_method
from training.params import CLASSIFIER_FIELDS, LORA_FIELDS, TrainParams
from training.train import METHODS, job_train_start

_TRAIN = TrainParams.__dataclass_fields__


class TrainForm(TargetMixin, forms.Form):
    """A train job's parameters (training.train.TrainParams); the defaults are the dataclass's. The
    base model is required for lora and ignored for the classifier."""

    target = forms.ChoiceField(
        label=gettext_lazy("Target"),
        help_text=gettext_lazy("a round's gold (and passes), or the resolved gold of an item set"),
    )
    passes = forms.CharField(
        max_length=300,
        initial="gold",
        label=gettext_lazy("Passes"),
        help_text=gettext_lazy("comma-separated: gold, annotator:NAME (a round only)"),
    )
    method = forms.ChoiceField(
        choices=[(m, m) for m in METHODS],
        label=gettext_lazy("Method"),
        help_text=gettext_lazy(
            "lora: an adapter over a causal LM (a GPU for a real model); classifier: scikit-learn, "
            "seconds on a CPU, no base model, the LoRA settings ignored. The default is lora on a machine "
            "with a GPU, the classifier elsewhere (NSM_TRAIN_METHOD)"
        ),
    )
    base_model = forms.CharField(
        required=False,
        max_length=250,
        label=gettext_lazy("Base model"),
        help_text=gettext_lazy("lora only: hub name or local folder (NSM_PARSER_MODEL)"),
    )
    output_dir = forms.CharField(
        required=False,
        max_length=250,
        label=gettext_lazy("Output dir"),
        help_text=gettext_lazy("empty: a folder of its own under NSM_MODEL_DIR"),
    )
    rank = setting_field(TrainParams, "rank")
    alpha = setting_field(TrainParams, "alpha")
    dropout = setting_field(TrainParams, "dropout")
    target_modules = forms.CharField(
        required=False,
        max_length=300,
        label=gettext_lazy("Target modules"),
        help_text=gettext_lazy("comma-separated; empty: the architecture's default"),
    )
    epochs = setting_field(TrainParams, "epochs")
    learning_rate = setting_field(TrainParams, "learning_rate")
    batch_size = setting_field(TrainParams, "batch_size")
    grad_accum = setting_field(TrainParams, "grad_accum")
    max_length = setting_field(TrainParams, "max_length")
    seed = setting_field(TrainParams, "seed")
    gradient_checkpointing = setting_field(TrainParams, "gradient_checkpointing")
    parser_name = forms.CharField(
        required=False, max_length=63, label=gettext_lazy("Parser name"),
        help_text=gettext_lazy(
            "the registry name the trained parser gets (its next version); empty: METHOD-SCOPE"
        ),
    )  # fmt: skip
    labels_from = forms.CharField(
        required=False,
        max_length=100,
        label=gettext_lazy("Labels from (item set)"),
        help_text=gettext_lazy(
            "classifier only: an item set whose reference labels (and appraisal ratings) also train "
            "the parser, through the rules; its eval-tier items are left out"
        ),
    )
    encoder = forms.CharField(
        required=False,
        max_length=250,
        label=gettext_lazy("Encoder"),
        help_text=gettext_lazy(
            "classifier only: sentence embeddings beside the n-grams: 'bundled' (all-MiniLM-L6-v2) "
            "or a model folder; empty: none"
        ),
    )
    # empty: the job's default
    appraisal_weight = setting_field(TrainParams, "appraisal_weight", required=False)
    label_trust = setting_field(TrainParams, "label_trust", required=False)
    label_prior = setting_field(TrainParams, "label_prior", required=False)
    abstain_below = forms.CharField(
        required=False, max_length=20, initial=_TRAIN["abstain_below"].default,
        label=gettext_lazy("Abstain below"),
        help_text=gettext_lazy(
            "classifier only, with labels: 'auto' (a confidence floor chosen on a tenth of the "
            "labels, held back; it also gives the parser its held-back accuracy), a share between 0 and 1, "
            "or empty: never"
        ),
    )  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = target_choices()
        self.fields["base_model"].initial = settings.NSM_PARSER_MODEL
        self.fields["method"].initial = default_train_method()
        for name in LORA_FIELDS:  # empty: the dataclass's default
            if name in self.fields:
                self.fields[name].required = False
        # which method reads each field: the page shows only the chosen method's (static/js/jobs.js)
        for names, method in ((("base_model", *LORA_FIELDS), "lora"), (CLASSIFIER_FIELDS, "classifier")):
            for name in names:
                if name in self.fields:
                    self.fields[name].widget.attrs["data-method"] = method

    def clean(self):
        data = super().clean()
        if data.get("method") == "lora" and not (data.get("base_model") or "").strip():
            self.add_error("base_model", _("required for the lora method: a hub name or local folder"))
        return data

    def params(self) -> dict:
        data = dict(self.cleaned_data)
        data.pop("target")
        for name in (
            "passes",
            "base_model",
            "output_dir",
            "target_modules",
            "labels_from",
            "encoder",
            "parser_name",
            "abstain_below",
        ):
            data[name] = (data.get(name) or "").strip()
        for name in ("appraisal_weight", "label_trust", "label_prior"):
            if data.get(name) is None:  # empty: the job's default
                data[name] = _TRAIN[name].default
        if data["method"] != "lora":
            for name in ("base_model", *LORA_FIELDS):
                data.pop(name, None)  # not used: the job keeps the defaults
        else:
            for name in CLASSIFIER_FIELDS:
                data.pop(name, None)
        return data

    def start(self, *, user) -> Job:
        return job_train_start(user=user, **self.scope(), **self.params())
