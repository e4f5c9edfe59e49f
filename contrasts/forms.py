"""The pages' forms: a new set, and a pair (the item, the rewrite, per slot the value it flips to
and, for an item without gold, the value it has; the expected label or invariance). The forms
read the fields; contrasts.services checks the pair and names what is wrong, which the view puts
back on the fields here."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from contrasts.models import NAME_PATTERN
from contrasts.scoring import ParserChoice, parser_choice, parser_choices
from contrasts.services import FAMILY_MAX, NOTE_MAX, TEXT_MAX, ContrastError
from nsmcore.schema import SLOTS


class ScoresQuery(forms.Form):
    """The scores page's query string: ``?parser=`` one parser (lexical, NAME@VERSION or NAME for
    its newest version); empty, every parser."""

    parser = forms.CharField(required=False, max_length=200)

    def clean_parser(self) -> ParserChoice | None:
        key = self.cleaned_data.get("parser", "")
        if not key:
            return None
        found = parser_choice(key)
        if found is None:
            raise forms.ValidationError(
                _("no parser %(parser)s; parsers: %(parsers)s")
                % {"parser": repr(key), "parsers": ", ".join(c.key for c in parser_choices())}
            )
        return found


class PairSetForm(forms.Form):
    name = forms.RegexField(
        regex=rf"^{NAME_PATTERN}$",
        max_length=63,
        label=_("Name"),
        help_text=_("lower-case letters, digits, '.', '_' or '-'"),
        error_messages={"invalid": _("use 1-63 lower-case letters, digits, '.', '_' or '-'")},
    )
    note = forms.CharField(
        required=False, max_length=NOTE_MAX, label=_("Note"), widget=forms.Textarea(attrs={"rows": 2})
    )


# The selects are read as text: the service checks every value once, for the page, the API and
# the command alike, and names what is wrong (an unknown value, the same on both sides).


def _select(first: str, values: Any, label: str, name: Any) -> forms.CharField:
    choices = [("", first), *((v, v) for v in values)]
    # each select names itself (its row's label names only the "to" one): a screen reader says it
    widget = forms.Select(choices=choices, attrs={"aria-label": name})
    return forms.CharField(required=False, label=label, widget=widget)


def _to_field(slot: Any) -> forms.CharField:
    return _select(_("no change"), slot.values, slot.name, format_lazy(_("{slot}: to"), slot=slot.name))


def _from_field(slot: Any) -> forms.CharField:
    return _select(_("as in gold"), slot.values, slot.name, format_lazy(_("{slot}: from"), slot=slot.name))


class PairForm(forms.Form):
    """Per slot ``to_<slot>`` (the value the rewrite flips it to, or no change) and ``from_<slot>``
    (the value it has in the item's text: needed only when the item has no resolved gold)."""

    item = forms.CharField(
        max_length=200,
        label=_("Item"),
        help_text=_("its id, or its source id (source:source_id when two sources share it)"),
    )
    text = forms.CharField(
        max_length=TEXT_MAX, label=_("Rewritten text"), widget=forms.Textarea(attrs={"rows": 3}), strip=False
    )
    family = forms.CharField(
        required=False, max_length=FAMILY_MAX, label=_("Family"),
        help_text=_("the edit family, e.g. F1; empty: the target slots' names, or invariance"),
    )  # fmt: skip
    invariance = forms.BooleanField(
        required=False,
        label=_("Invariance pair"),
        help_text=_("nothing should change: no slot, the same label"),
    )
    expected = forms.CharField(required=False, label=_("Expected label"), widget=forms.Select())
    note = forms.CharField(
        required=False, max_length=NOTE_MAX, label=_("Note"), widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: Any, emotions: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", _("choose (not for an invariance pair)")), *((e, e) for e in emotions)]
        self.fields["expected"].widget.choices = choices
        for slot in SLOTS:
            self.fields[f"to_{slot.name}"] = _to_field(slot)
            self.fields[f"from_{slot.name}"] = _from_field(slot)

    def slot_rows(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        return [(s.name, self[f"from_{s.name}"], self[f"to_{s.name}"]) for s in SLOTS]

    def values(self) -> dict[str, Any]:
        """pair_check's keywords from the cleaned fields."""
        data = self.cleaned_data
        return {
            "item": data["item"],
            "text": data["text"],
            "family": data["family"],
            "invariance": data["invariance"],
            "expected": data["expected"],
            "note": data["note"],
            "targets": {s.name: data[f"to_{s.name}"] for s in SLOTS if data.get(f"to_{s.name}")},
            "from_values": {s.name: data[f"from_{s.name}"] for s in SLOTS if data.get(f"from_{s.name}")},
        }

    def add_problems(self, error: ContrastError) -> None:
        """The service's refusal on the fields it names (``targets.agency`` on ``to_agency``)."""
        for key, message in error.problems.items():
            field, _dot, slot = key.partition(".")
            name = {"targets": f"to_{slot}", "from": f"from_{slot}"}.get(field, field) if slot else field
            self.add_error(name if name in self.fields else None, message)
