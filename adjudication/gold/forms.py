"""Forms of the gold pages: the resolve form of a record, the button that opens records, and the
training download's query string."""

from __future__ import annotations

from typing import Any

from django import forms
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from adjudication.forms import keeping_value
from annotator.models import Round
from nsmcore.schema import SLOT_NAMES, SLOTS
from nsmcore.training_data import FORMATS

DEFAULT_FORMAT = "prompt"  # the transformers backend's


class ResolveForm(forms.Form):
    """The gold item's resolve form: a value per slot (empty keeps the current one), and, when two
    construals are kept, the second's values (empty: as the first). A value outside its slot is
    refused here by name; whether every slot ends up set is the service's check."""

    two_construals = forms.BooleanField(required=False)
    why = forms.CharField(required=False, max_length=5000)
    # the record's version when the page was read: a save over a newer one is refused (409)
    base_version = forms.IntegerField(required=False, min_value=0, max_value=2**31 - 1)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        keep = _("keep")
        for slot in SLOTS:
            # the service's wording, so that the page reads the same either way
            refused = keeping_value(
                _("'%(value)s' is not an allowed value; allowed: %(allowed)s"), allowed=", ".join(slot.values)
            )
            for name in (slot.name, f"second_{slot.name}"):
                self.fields[name] = forms.ChoiceField(
                    choices=[("", keep), *((v, v) for v in slot.values)],
                    required=False,
                    error_messages={"invalid_choice": refused},
                )

    def slots(self) -> tuple[dict[str, str], dict[str, str] | None]:
        """The slots set on the first construal, and the second's (None: one construal)."""
        data = self.cleaned_data
        first = {name: data[name] for name in SLOT_NAMES if data.get(name)}
        if not data["two_construals"]:
            return first, None
        return first, {name: data[f"second_{name}"] for name in SLOT_NAMES if data.get(f"second_{name}")}


class GoldOpenForm(forms.Form):
    """The button that opens gold records for items whose annotations are all in; ``next`` is the
    page it came from (a path on this site; anything else goes back to the gold list)."""

    next = forms.CharField(required=False, max_length=2000)

    def next_url(self, round_: Round) -> str:
        target = self.cleaned_data.get("next", "") if self.is_valid() else ""
        if target and url_has_allowed_host_and_scheme(target, allowed_hosts=None) and target.startswith("/"):
            return target
        return reverse("gold_list", args=[round_.pk])


class TrainingQuery(forms.Form):
    """The training download's query string: the format (left out, the transformers backend's
    prompt format; nsmcore.training_data.FORMATS). An unknown one is refused, naming the formats."""

    format = forms.CharField(required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["format"] = data.get("format") or DEFAULT_FORMAT
        if data["format"] not in FORMATS:
            raise forms.ValidationError(
                _("format %(format)s: formats are %(formats)s")
                % {"format": repr(data["format"]), "formats": ", ".join(FORMATS)}
            )
        return data
