"""Forms of the conventions pages: a convention's proposal and its revision (the vote form is
shared with rule revisions: adjudication.forms.VoteForm)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from adjudication.forms import keeping_value
from adjudication.models import Convention
from annotator.models import Round
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS


class ProposeForm(forms.Form):
    """A convention's dispute, picked from lists: the twelve slots, and the values of the chosen
    slot (the page swaps those in with htmx when the slot changes). A value outside the slot's set
    is refused here, naming it and the allowed ones."""

    VALUE_FIELDS = ("value_a", "value_b", "chosen")

    round = forms.ModelChoiceField(Round.objects.order_by("name"), label=gettext_lazy("Round"))
    slot = forms.ChoiceField(
        label=gettext_lazy("Slot"),
        choices=[("", gettext_lazy("choose a slot…"))] + [(s, s) for s in SLOT_NAMES],
    )
    value_a = forms.ChoiceField(label=gettext_lazy("one value"))
    value_b = forms.ChoiceField(label=gettext_lazy("the other value"))
    chosen = forms.ChoiceField(
        label=gettext_lazy("the slot takes"),
        help_text=gettext_lazy("one of the two values"),
        error_messages={"required": gettext_lazy("the slot takes: choose one of the two values")},
    )
    rule = forms.CharField(
        label=gettext_lazy("Rule"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=gettext_lazy("the convention in words"),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # where the proposal came from (a flow, or a conflict and its item): kept as its source
        self.fields["from"] = forms.ChoiceField(
            choices=[("", ""), ("flow", "flow"), ("conflict", "conflict")], required=False
        )
        self.fields["item"] = forms.CharField(required=False, max_length=64)
        slot = (self.data if self.is_bound else self.initial).get("slot", "")
        values = SLOT_BY_NAME[slot].values if slot in SLOT_BY_NAME else ()
        self.fields["slot"].widget.attrs.update(
            {"hx-get": reverse("conventions"), "hx-trigger": "change", "hx-target": "#convention-values",
             "hx-swap": "outerHTML"}
        )  # fmt: skip
        # no slot yet: every slot's values, grouped, so that the page works without JavaScript
        listed = [(v, v) for v in values] or [(s.name, [(v, v) for v in s.values]) for s in SLOTS]
        for name in self.VALUE_FIELDS:
            field = self.fields[name]
            field.choices = [("", _("choose…")), *listed]
            if values:
                field.error_messages["invalid_choice"] = keeping_value(
                    _("%(value)s is not a value of %(slot)s; allowed: %(allowed)s"),
                    slot=slot,
                    allowed=", ".join(values),
                )

    def source(self) -> dict[str, str]:
        return {k: self.cleaned_data[k] for k in ("from", "item") if self.cleaned_data.get(k)}


class ReviseForm(forms.Form):
    """A revision of an accepted convention: which of its two values the slot now takes, and why."""

    chosen = forms.ChoiceField(choices=())
    rule = forms.CharField(
        max_length=5000, error_messages={"required": gettext_lazy("write the revised convention in words")}
    )

    def __init__(self, *args: Any, convention: Convention, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pair = (convention.value_a, convention.value_b)
        self.fields["chosen"].choices = [(v, v) for v in pair]
        self.fields["chosen"].error_messages["invalid_choice"] = keeping_value(
            _("%(value)s is not one of the disputed values (%(a)s or %(b)s)"), a=pair[0], b=pair[1]
        )
