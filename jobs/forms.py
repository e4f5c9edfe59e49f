"""The forms that start jobs. Each validates what the page (and the API, which runs the same form:
jobs.api) may ask for, and ``start(user=...)`` starts its job from the cleaned data, so the page
and the API start the same job from the same rules."""

from __future__ import annotations

from django import forms
from django.conf import settings

from annotator.models import ItemSet, Round
from jobs.export import export_start
from jobs.models import Job
from jobs.parsers import backend_choices, default_prefill
from jobs.prefill import job_prefill_start
from jobs.raw_export import FORMATS, raw_export_start
from jobs.training import CLASSIFIER_FIELDS, LORA_FIELDS, METHODS, TrainParams, job_train_start
from jobs.verification import job_verify_start, verifier_available, verifier_setting_problem
from nsmcore.verifier import VerifierUnavailable


def target_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    sets = [(f"set:{s.pk}", f"{s.name} ({s.size} items)") for s in ItemSet.objects.order_by("name")]
    rounds = [
        (f"round:{r.pk}", f"{r.name} ({r.get_mode_display()}, {r.item_set.name})")
        for r in Round.objects.select_related("item_set").order_by("name")
    ]
    return [("Item sets", sets), ("Rounds", rounds)]


class TargetMixin:
    """A choice of item set or round, given as ``set:<id>`` or ``round:<id>``."""

    def clean_target(self):
        kind, _, pk = self.cleaned_data["target"].partition(":")
        model = Round if kind == "round" else ItemSet
        try:
            return model.objects.get(pk=int(pk))
        except (ValueError, model.DoesNotExist):
            raise forms.ValidationError("no such item set or round") from None

    def scope(self) -> dict:
        """The cleaned target as the services take it."""
        target = self.cleaned_data["target"]
        return {"round_": target} if isinstance(target, Round) else {"item_set": target}


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
        # the best registered parser, else the settings' backend (jobs.parsers.default_prefill)
        backend, model = default_prefill()
        self.fields["backend"].initial, self.fields["model"].initial = backend, model
        if model:
            self.fields["model"].help_text = (
                f"the best registered parser is {model} (the Parsers page says why); "
                + self.fields["model"].help_text
            )

    def start(self, *, user) -> Job:
        data = self.cleaned_data
        return job_prefill_start(
            user=user, **self.scope(), backend=data["backend"], model=data["model"].strip(),
            mode=data["mode"], adapter=data["adapter"].strip(), text_field=data["text_field"],
            overwrite=data["overwrite"],
        )  # fmt: skip


class VerifyForm(TargetMixin, forms.Form):
    target = forms.ChoiceField(
        help_text="an item set (a parser's explications) or a round (its resolved gold)"
    )
    parser = forms.CharField(
        required=False, max_length=300, help_text="for an item set: the parser whose explications are checked"
    )
    model = forms.CharField(
        required=False, max_length=250, help_text="NLI model name or local path; empty: NSM_VERIFIER_MODEL"
    )
    text_field = forms.ChoiceField(choices=Round.TEXT_FIELDS, initial=Round.TEXT_GENERATED)

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


class ExportForm(forms.Form):
    round = forms.ModelChoiceField(
        queryset=Round.objects.order_by("name"),
        required=False,
        empty_label="the whole gold corpus",
        help_text="resolved gold items only; open ones are left out until resolved",
    )
    verify = forms.BooleanField(
        required=False,
        initial=True,
        label="Verify every line",
        help_text="judgements already cached are reused; the rest are computed during the export",
    )
    model = forms.CharField(
        required=False, max_length=250, help_text="NLI model name or local path; empty: NSM_VERIFIER_MODEL"
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
                self.add_error(field, f"{problem}; or export without verification")
        return data

    def start(self, *, user) -> Job:
        data = self.cleaned_data
        return export_start(
            user=user, round_=data["round"], model=data["model"].strip(), verify=data["verify"]
        )


class RawExportForm(forms.Form):
    """A round's raw annotations (jobs.raw_export): every revision of every annotator."""

    round = forms.ModelChoiceField(queryset=Round.objects.order_by("name"), empty_label=None)
    format = forms.ChoiceField(
        choices=[(f, f.upper()) for f in FORMATS],
        initial=FORMATS[0],
        help_text="JSONL: one JSON object per revision; CSV: a header row and one column per slot",
    )

    def start(self, *, user) -> Job:
        return raw_export_start(
            user=user, round_=self.cleaned_data["round"], format=self.cleaned_data["format"]
        )


_TRAIN = TrainParams.__dataclass_fields__


class TrainForm(TargetMixin, forms.Form):
    """A train job's parameters (jobs.training.TrainParams); the defaults are the dataclass's. The
    base model is required for lora and ignored for the classifier."""

    target = forms.ChoiceField(help_text="a round's gold (and passes), or the resolved gold of an item set")
    passes = forms.CharField(
        max_length=300, initial="gold", help_text="comma-separated: gold, annotator:NAME (a round only)"
    )
    method = forms.ChoiceField(
        choices=[(m, m) for m in METHODS],
        initial="lora",
        help_text="lora: an adapter over a causal LM (a GPU for a real model); classifier: scikit-learn, "
        "seconds on a CPU, no base model, the LoRA settings ignored",
    )
    base_model = forms.CharField(
        required=False, max_length=250, help_text="lora only: hub name or local folder (NSM_PARSER_MODEL)"
    )
    output_dir = forms.CharField(
        required=False, max_length=250, help_text="empty: a folder of its own under NSM_MODEL_DIR"
    )
    rank = forms.IntegerField(min_value=1, initial=_TRAIN["rank"].default)
    alpha = forms.IntegerField(min_value=1, initial=_TRAIN["alpha"].default)
    dropout = forms.FloatField(min_value=0, max_value=0.99, initial=_TRAIN["dropout"].default)
    target_modules = forms.CharField(
        required=False, max_length=300, help_text="comma-separated; empty: the architecture's default"
    )
    epochs = forms.IntegerField(min_value=1, initial=_TRAIN["epochs"].default)
    learning_rate = forms.FloatField(min_value=1e-7, max_value=0.5, initial=_TRAIN["learning_rate"].default)
    batch_size = forms.IntegerField(min_value=1, initial=_TRAIN["batch_size"].default)
    grad_accum = forms.IntegerField(
        min_value=1, initial=_TRAIN["grad_accum"].default, label="Gradient accumulation"
    )
    max_length = forms.IntegerField(min_value=64, initial=_TRAIN["max_length"].default)
    seed = forms.IntegerField(min_value=0, initial=_TRAIN["seed"].default)
    gradient_checkpointing = forms.BooleanField(
        required=False, help_text="less GPU memory for long prompts, about a third slower"
    )
    parser_name = forms.CharField(
        required=False, max_length=63, label="Parser name",
        help_text="the registry name the trained parser gets (its next version); empty: METHOD-SCOPE",
    )  # fmt: skip
    labels_from = forms.CharField(
        required=False,
        max_length=100,
        label="Labels from (item set)",
        help_text="classifier only: an item set whose reference labels (and appraisal ratings) also train "
        "the parser, through the rules; its eval-tier items are left out",
    )
    encoder = forms.CharField(
        required=False,
        max_length=250,
        help_text="classifier only: sentence embeddings beside the n-grams: 'bundled' (all-MiniLM-L6-v2) "
        "or a model folder; empty: none",
    )
    appraisal_weight = forms.FloatField(
        required=False, min_value=0, max_value=10, initial=0.0,
        help_text="classifier only, with labels: how much the appraisal ratings count (0: not at all)",
    )  # fmt: skip
    label_trust = forms.FloatField(
        required=False, min_value=0.000001, max_value=1, initial=_TRAIN["label_trust"].default,
        help_text="classifier only, with labels: how far a label may pull the slots toward its rule "
        "(1: all the way; lower keeps them closer to the gold explications)",
    )  # fmt: skip
    label_prior = forms.FloatField(
        required=False, min_value=0, max_value=100, initial=_TRAIN["label_prior"].default,
        help_text="classifier only, with labels: the weight of a label head that chooses each text's "
        "rule when decoding (0: none)",
    )  # fmt: skip
    abstain_below = forms.CharField(
        required=False, max_length=20, initial=_TRAIN["abstain_below"].default, label="Abstain below",
        help_text="classifier only, with labels: 'auto' (a confidence floor chosen on a tenth of the "
        "labels, held back; it also gives the parser its held-back accuracy), a share between 0 and 1, "
        "or empty: never",
    )  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = target_choices()
        self.fields["base_model"].initial = settings.NSM_PARSER_MODEL
        for name in LORA_FIELDS:  # empty: the dataclass's default
            if name in self.fields:
                self.fields[name].required = False

    def clean(self):
        data = super().clean()
        if data.get("method") == "lora" and not (data.get("base_model") or "").strip():
            self.add_error("base_model", "required for the lora method: a hub name or local folder")
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
