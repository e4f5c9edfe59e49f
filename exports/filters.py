"""Filters of the exports API's list, applied in the database (django-filter): a bad value is a 400
naming the parameter."""

from __future__ import annotations

import django_filters

from annotator.models import Round
from exports.models import Export


class ExportFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=Export.Kind.choices)
    round = django_filters.ModelChoiceFilter(queryset=Round.objects.all(), help_text="a round's id")

    class Meta:
        model = Export
        fields: list[str] = []
