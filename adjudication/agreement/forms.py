"""Query strings of the analytics pages: each page reads its ?... through one of these, so that a
bad value is a 400 naming it (adjudication.forms.refused_query), and its CSV download (its own
view) and the API read the same form."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from adjudication.forms import keeping_value
from annotator.models import ItemSet
from annotator.search import search_field
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES


class AgreementQuery(forms.Form):
    intensity = forms.ChoiceField(
        choices=[("", gettext_lazy("nominal")), ("ordinal", gettext_lazy("ordinal"))], required=False,
        help_text="intensity's agreement as an ordinal scale (the other slots are nominal)",
    )  # fmt: skip

    item_set = forms.CharField(
        required=False, max_length=100,
        help_text="only the round's items in this item set (a queue's random share: unbiased figures)",
    )  # fmt: skip

    def levels(self) -> dict[str, str]:
        return {"intensity": "ordinal"} if self.cleaned_data["intensity"] == "ordinal" else {}

    def clean_item_set(self) -> ItemSet | None:
        name = self.cleaned_data.get("item_set", "")
        if not name:
            return None
        found = ItemSet.objects.filter(name=name).first()
        if found is None:
            raise forms.ValidationError(
                _("item_set %(name)s: there is no item set of that name") % {"name": repr(name)}
            )
        return found


class ConflictQuery(forms.Form):
    """Conflicts of one slot (empty: any), and of one value pair (a, b: values of that slot); the
    page, API and CSV read it alike."""

    slot = forms.ChoiceField(
        choices=[("", gettext_lazy("any slot"))] + [(s, s) for s in SLOT_NAMES], required=False
    )
    a = forms.CharField(required=False, max_length=40)
    b = forms.CharField(required=False, max_length=40)
    q = search_field()
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["slot"].error_messages["invalid_choice"] = keeping_value(
            _("unknown slot %(value)r; slots: %(slots)s"), slots=", ".join(SLOT_NAMES)
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        slot = data.get("slot", "")
        for name in ("a", "b"):
            value = data.get(name, "")
            if value and not slot:
                self.add_error(name, _("a value needs its slot: give ?slot= too"))
            elif value and slot and value not in SLOT_BY_NAME[slot].values:
                allowed = ", ".join(SLOT_BY_NAME[slot].values)
                self.add_error(
                    name,
                    _("%(value)s is not a value of %(slot)s; its values: %(allowed)s")
                    % {"value": repr(value), "slot": slot, "allowed": allowed},
                )
        return data


class FlowQuery(forms.Form):
    """Two passes of the round (or of a round over the same items) to compare; left out, the
    round's first two."""

    a = forms.ChoiceField(required=False)
    b = forms.ChoiceField(required=False)

    def __init__(self, data, *, passes: list[tuple[str, str]], defaults: tuple[str, str]):
        super().__init__(data)
        for name, default in zip(("a", "b"), defaults, strict=True):
            self.fields[name].choices = [("", ""), *passes]
            self.fields[name].initial = default

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name in ("a", "b"):
            data[name] = data.get(name) or self.fields[name].initial
        return data


class AnchoringQuery(forms.Form):
    """A blind round over the same items to compare with (its id); left out, none."""

    control = forms.IntegerField(required=False, min_value=1)
