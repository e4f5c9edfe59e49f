"""The forms a rule revision is proposed with: an edit of the active rules (each rule's conditions
as checkboxes of slot values, and its place in the order) or an uploaded rule set file. Both give
a rule set document (the v1.json format) that nsmcore then reads, naming a bad rule and slot."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import nsmcore
from nsmcore import jsonio
from nsmcore.schema import SLOTS

MAX_FILE_BYTES = 1_000_000


class ProposalFields(forms.Form):
    """What every proposal says besides its rules."""

    version = forms.CharField(
        required=False,
        max_length=32,
        label=gettext_lazy("Version"),
        help_text=gettext_lazy("its name; left empty, the next number (2, 3, ...)"),
    )
    note = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        label=gettext_lazy("Note"), help_text=gettext_lazy("what the revision changes and why"),
    )  # fmt: skip
    pilot_item_set = forms.CharField(
        required=False,
        max_length=100,
        label=gettext_lazy("Pilot item set"),
        help_text=gettext_lazy("the pilot item set compared (default: the setting)"),
    )


def _field(rule_index: int, slot: str) -> str:
    return f"r{rule_index}_{slot}"


class EditRulesForm(ProposalFields):
    """The active rules, editable: per rule, a place in the order and the allowed values of each
    slot it reads (no value ticked: the rule does not read that slot)."""

    def __init__(self, *args: Any, rule_set: nsmcore.RuleSet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rule_set = rule_set
        for k, rule in enumerate(rule_set.rules):
            self.fields[f"r{k}_order"] = forms.IntegerField(
                min_value=0, max_value=999, initial=k + 1,
                label=_("%(emotion)s: place") % {"emotion": rule.emotion},
                error_messages={
                    "required": _("rule %(index)s (%(emotion)s): give its place in the order")
                    % {"index": k, "emotion": rule.emotion}
                },
            )  # fmt: skip
            for slot in SLOTS:
                self.fields[_field(k, slot.name)] = forms.MultipleChoiceField(
                    choices=[(v, v) for v in slot.values], required=False,
                    widget=forms.CheckboxSelectMultiple, label=f"{rule.emotion}: {slot.name}",
                    initial=sorted(rule.conditions.get(slot.name, ())),
                )  # fmt: skip

    def rows(self) -> list[dict[str, Any]]:
        """Per rule, its order field and the bound field of each slot (for the template)."""
        return [
            {
                "index": k,
                "emotion": rule.emotion,
                "order": self[f"r{k}_order"],
                "slots": [(slot.name, self[_field(k, slot.name)]) for slot in SLOTS],
            }
            for k, rule in enumerate(self.rule_set.rules)
        ]

    def document(self) -> dict[str, Any]:
        """The edited rule set: rules sorted by their place (ties keep the current order)."""
        data = self.cleaned_data
        rules = []
        for k, rule in enumerate(self.rule_set.rules):
            conditions = {s.name: data[_field(k, s.name)] for s in SLOTS if data[_field(k, s.name)]}
            rules.append((data[f"r{k}_order"], k, {"emotion": rule.emotion, "conditions": conditions}))
        rules.sort(key=lambda r: (r[0], r[1]))
        return {"description": self.rule_set.description, "rules": [r[2] for r in rules]}


class UploadRulesForm(ProposalFields):
    file = forms.FileField(
        label=gettext_lazy("File"), help_text=gettext_lazy("a rule set file (JSON, the v1.json format)")
    )

    def clean_file(self) -> dict[str, Any]:
        upload = self.cleaned_data["file"]
        if upload.size > MAX_FILE_BYTES:
            raise forms.ValidationError(
                _("%(name)s: %(size)s bytes; at most %(limit)s")
                % {"name": upload.name, "size": f"{upload.size:,}", "limit": f"{MAX_FILE_BYTES:,}"}
            )
        try:
            document = jsonio.loads(upload.read().decode("utf-8"))
        except jsonio.JSONTooComplex as error:
            raise forms.ValidationError(f"{upload.name}: {error}") from None
        except UnicodeDecodeError:
            raise forms.ValidationError(_("%(name)s: not UTF-8 text") % {"name": upload.name}) from None
        except json.JSONDecodeError as error:
            raise forms.ValidationError(
                _("%(name)s: not valid JSON (%(error)s)") % {"name": upload.name, "error": error}
            ) from None
        if not isinstance(document, dict):
            raise forms.ValidationError(
                _("%(name)s: a rule set file is a JSON object with 'rules'") % {"name": upload.name}
            )
        return document

    def document(self) -> dict[str, Any]:
        return self.cleaned_data["file"]
