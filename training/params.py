"""A train job's parameters, declared once (issue 24): the form, the API and the command read
them from here (training.train runs the job; this module was split from it to keep it short)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from adjudication.training import parse_passes
from jobs.kinds import JobError, Params, setting
from nsmcore.lora import BOUNDS, LoraError, LoraSettings
from nsmcore.parsers.classifier_training import NUMBER_OPTIONS
from nsmcore.training_data import (
    TrainingDataError,
)
from registry.services import RegistryError, check_name

#: the methods training.train registers (its METHODS, whose keys tests/training keeps equal to these)
METHOD_NAMES = ("lora", "classifier")
LORA_FIELDS = ("rank", "alpha", "dropout", "target_modules", "epochs", "learning_rate", "batch_size",
               "grad_accum", "max_length", "checkpoint_every", "gradient_checkpointing")  # fmt: skip
#: the settings only the classifier method reads
CLASSIFIER_FIELDS = (
    "labels_from",
    "encoder",
    "appraisal_weight",
    "label_trust",
    "label_prior",
    "abstain_below",
)
#: the settings of training through labels: they apply with labels_from only
LABEL_FIELDS = ("label_trust", "label_prior", "abstain_below")
LORA_DEFAULTS = LoraSettings()
#: the classifier's numeric options' bounds, as nsmcore's training checks them
CLASSIFIER_BOUNDS = {name: {"min": low, "max": high} for name, low, high in NUMBER_OPTIONS}


def lora_setting(name: str, *, label: str, help: str = "") -> object:
    """A LoRA setting's field with nsmcore.lora's own default and bounds, so the form, the API, the
    command and the library refuse the same values."""
    low, high = BOUNDS[name]
    return setting(getattr(LORA_DEFAULTS, name), min=low, max=high, label=label, help=help)


@dataclass(frozen=True)
class TrainParams(Params):
    #: lora only: the model the adapter goes over (the classifier has none)
    base_model: str = ""
    method: str = "lora"
    #: comma-separated pass keys: gold, annotator:<username>
    passes: str = "gold"
    #: empty: NSM_MODEL_DIR/job-<id>
    output_dir: str = ""
    # labels and help are marked with gettext_noop: the form translates them when shown
    # (jobs.forms.setting_field), the command's help reads them as they are
    rank: int = lora_setting(
        "rank", label=gettext_noop("Rank"), help=gettext_noop("LoRA rank: the adapter's size")
    )
    alpha: int = lora_setting(
        "alpha",
        label=gettext_noop("Alpha"),
        help=gettext_noop("LoRA alpha: the adapter's scale (alpha / rank)"),
    )
    dropout: float = lora_setting(
        "dropout",
        label=gettext_noop("Dropout"),
        help=gettext_noop("dropout on the adapter's input"),
    )
    #: comma-separated module names; empty: the architecture's default
    target_modules: str = ""
    epochs: int = lora_setting("epochs", label=gettext_noop("Epochs"))
    learning_rate: float = lora_setting("learning_rate", label=gettext_noop("Learning rate"))
    batch_size: int = lora_setting(
        "batch_size", label=gettext_noop("Batch size"), help=gettext_noop("examples per forward pass")
    )
    grad_accum: int = lora_setting(
        "grad_accum",
        label=gettext_noop("Gradient accumulation"),
        help=gettext_noop("an optimizer step reads batch size x this many"),
    )
    max_length: int = lora_setting(
        "max_length",
        label=gettext_noop("Max length"),
        help=gettext_noop("tokens of prompt and answer, at most"),
    )
    seed: int = lora_setting("seed", label=gettext_noop("Seed"))
    checkpoint_every: int = lora_setting(
        "checkpoint_every",
        label=gettext_noop("Checkpoint every"),
        help=gettext_noop("steps between checkpoints (a stopped job resumes there)"),
    )
    gradient_checkpointing: bool = setting(
        LORA_DEFAULTS.gradient_checkpointing,
        label=gettext_noop("Gradient checkpointing"),
        help=gettext_noop("less GPU memory for long prompts, about a third slower"),
    )
    #: the registry name the trained parser gets (a new version of it); empty: METHOD-SCOPE
    parser_name: str = ""
    #: classifier only: an item set whose items' reference labels (and appraisal ratings) train
    #: the parser through the rules; eval-tier items are left out
    labels_from: str = ""
    #: classifier only: sentence embeddings beside the n-grams ("bundled" or a model folder)
    encoder: str = ""
    appraisal_weight: float = setting(
        0.0, **CLASSIFIER_BOUNDS["appraisal_weight"], label=gettext_noop("Appraisal weight"),
        help=gettext_noop(
            "classifier only, with labels: how much the appraisal ratings count (0: not at all)"
        ),
    )  # fmt: skip
    # The three settings below apply with labels_from only. Their defaults are the tool's measured
    # best on held-out silver-156 (benchmarks/results/parser.json, README): the library's
    # defaults (nsmcore.parsers.classifier.DEFAULT_OPTIONS) are the plain ones.
    label_trust: float = setting(
        0.5, **CLASSIFIER_BOUNDS["label_trust"], label=gettext_noop("Label trust"),
        help=gettext_noop("classifier only, with labels: how far a label may pull the slots toward its rule "
                          "(1: all the way; lower keeps them closer to the gold explications)"),
    )  # fmt: skip
    label_prior: float = setting(
        4.0, **CLASSIFIER_BOUNDS["label_prior"], label=gettext_noop("Label prior"),
        help=gettext_noop("classifier only, with labels: the weight of a label head that chooses each text's "
                          "rule when decoding (0: none)"),
    )  # fmt: skip
    #: classifier only, with labels: "auto" (a confidence floor chosen on a tenth of the labelled
    #: texts, held back; with fewer than 40 it is off and the summary says so), "" (never
    #: abstain) or a share between 0 and 1
    abstain_below: str = "auto"

    def validate(self) -> None:
        if self.method not in METHOD_NAMES:
            self.bad(
                "method",
                _("unknown method %(method)s; methods: %(methods)s")
                % {"method": repr(self.method), "methods": ", ".join(METHOD_NAMES)},
            )
        if self.method == "lora" and not self.base_model.strip():
            self.bad(
                "base_model",
                _(
                    "empty; the lora method needs the base model's name or local folder "
                    "(e.g. NSM_PARSER_MODEL)"
                ),
            )
        if self.method != "classifier":
            for name in CLASSIFIER_FIELDS:
                if getattr(self, name) != TrainParams.__dataclass_fields__[name].default:
                    self.bad(name, _("for the classifier method only"))
        if self.parser_name:
            try:
                check_name(self.parser_name)
            except RegistryError as error:
                self.bad("parser_name", str(error))
        if self.abstain_below not in ("", "auto"):
            try:
                share = float(self.abstain_below)
            except ValueError:
                share = -1.0
            if not 0 < share < 1:
                self.bad(
                    "abstain_below",
                    _("'auto', empty or a share between 0 and 1, got %(value)s")
                    % {"value": repr(self.abstain_below)},
                )
        if not self.labels_from:  # a setting that would change something, given without labels
            for name in LABEL_FIELDS:
                value = getattr(self, name)
                if value != TrainParams.__dataclass_fields__[name].default and value != "":
                    self.bad(name, _("needs labels_from: it is about training on labels"))
        try:
            parse_passes(self.passes)
            if self.method == "lora":
                self.lora_settings()
        except (TrainingDataError, LoraError) as error:
            raise JobError(
                _("%(kind)s job parameter: %(error)s") % {"kind": self.kind, "error": error}
            ) from None

    def lora_settings(self) -> LoraSettings:
        modules = tuple(m.strip() for m in self.target_modules.split(",") if m.strip())
        return LoraSettings(
            rank=self.rank, alpha=self.alpha, dropout=self.dropout, target_modules=modules,
            epochs=self.epochs,
            learning_rate=self.learning_rate, batch_size=self.batch_size, grad_accum=self.grad_accum,
            max_length=self.max_length, seed=self.seed, checkpoint_every=self.checkpoint_every,
            device=settings.NSM_PARSER_DEVICE, gradient_checkpointing=self.gradient_checkpointing,
        )  # fmt: skip
