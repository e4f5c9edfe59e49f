"""The profiles' query string, read once for the pages, the CSV and the API: ``round`` (a round's
id; left out, every human round) and ``page`` (the digest's page). Each bad value is named."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy

from profiles.selectors import ProfileError, profile_scope, round_for_profiles

PAGE_MAX = 1_000_000


class ProfileQuery(forms.Form):
    round = forms.CharField(
        required=False, max_length=20, label=gettext_lazy("round"), help_text=gettext_lazy("a round's id")
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=PAGE_MAX, label=gettext_lazy("page"))

    def clean(self) -> dict[str, Any]:
        """``scope`` (profiles.selectors.Scope) and ``page`` (1 when left out)."""
        data = super().clean()
        if "round" in self.errors:
            return data
        try:
            chosen = round_for_profiles(data["round"]) if data.get("round") else None
            data["scope"] = profile_scope(round_=chosen)
        except ProfileError as error:
            self.add_error(error.field, str(error))
        data["page"] = data.get("page") or 1
        return data
