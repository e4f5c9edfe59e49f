"""Filters of the conventions list of the API, applied in the database (django-filter)."""

from __future__ import annotations

import django_filters

from adjudication.models import Convention
from annotator.filters import IdFilter
from nsmcore.schema import SLOT_NAMES


class ConventionFilter(django_filters.FilterSet):
    """The conventions list of the API: by round (its id), by status, by slot."""

    round = IdFilter(field_name="round_id", help_text="a round's id")
    status = django_filters.ChoiceFilter(choices=Convention.Status.choices)
    slot = django_filters.ChoiceFilter(choices=[(s, s) for s in SLOT_NAMES])

    class Meta:
        model = Convention
        fields: list[str] = []
