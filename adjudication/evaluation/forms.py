"""The Evaluation page's query string, read by the page and by each of its CSV tables."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext as _

from adjudication.evaluation.figures import EvaluationRequestError, item_set_named, options_from
from adjudication.evaluation.parser import heldout_named


class EvaluationQuery(forms.Form):
    """The Evaluation page's query string: the pass (left out, the round's first) and a pass to
    compare, the item set to score on, the held-out set of a parser pass, and the scoring options
    (adjudication.evaluation.options_from). Each bad value is named; the options, the item sets
    and the passes come back cleaned (``options``, ``item_set``, ``heldout``, ``pass``)."""

    compare = forms.CharField(required=False, max_length=200)
    item_set = forms.CharField(required=False, max_length=200)
    heldout = forms.CharField(required=False, max_length=200)

    def __init__(self, data, *, default_pass: str, rule_set):
        super().__init__(data)
        self.fields["pass"] = forms.CharField(required=False, max_length=200)  # a keyword: not declarable
        self.default_pass, self.rule_set = default_pass, rule_set

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["pass"] = data.get("pass") or self.default_pass
        try:
            data["options"] = options_from(self.data, self.rule_set)
            data["item_set"] = item_set_named(data.get("item_set", ""))
            data["heldout"] = heldout_named(data.get("heldout", ""))
        except EvaluationRequestError as error:
            raise forms.ValidationError(str(error)) from None
        if data.get("compare") and data["compare"] == data["pass"]:
            raise forms.ValidationError(
                _("compare is the same pass as pass (%(pass)s): choose another pass") % {"pass": data["pass"]}
            )
        return data

    def shown(self) -> dict[str, str]:
        """What the page's form shows: the cleaned pass, compare pass and held-out set's name, or
        for a refused query the values asked for, to be corrected."""
        if self.is_valid():
            data = self.cleaned_data
            heldout = data["heldout"].name if data["heldout"] is not None else ""
            return {"pass_key": data["pass"], "compare_key": data["compare"], "heldout_name": heldout}
        return {
            "pass_key": self["pass"].value() or self.default_pass,
            "compare_key": self["compare"].value() or "",
            "heldout_name": self["heldout"].value() or "",
        }
