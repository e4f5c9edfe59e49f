"""The rule revision pages' query string (their vote form is shared with conventions:
adjudication.forms.VoteForm)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _


class RevisionQuery(forms.Form):
    """A version page's query string: the pass to compare the two versions on, a parser with
    stored predictions (left out, none). An unknown one is refused, naming the passes."""

    def __init__(self, data, *, passes: list[str]):
        super().__init__(data)
        self.fields["pass"] = forms.CharField(required=False)  # a keyword: not declarable
        self.passes = passes

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        chosen = data.get("pass", "")
        if chosen and chosen not in self.passes:
            raise forms.ValidationError(
                _("pass: no parser %(parser)s has predictions; passes: %(passes)s")
                % {"parser": repr(chosen), "passes": ", ".join(self.passes)}
            )
        return data
