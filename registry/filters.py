"""Filters of the registry API's list, applied in the database (django-filter): a bad value is a
400 naming the parameter."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet

from registry.models import RegisteredParser


class ParserFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(method="by_name", help_text="NAME (its versions) or NAME@VERSION")
    backend = django_filters.ChoiceFilter(choices=RegisteredParser.Backend.choices)

    class Meta:
        model = RegisteredParser
        fields: list[str] = []

    def by_name(self, queryset: QuerySet, field: str, value: str) -> QuerySet:
        name, at, version = value.partition("@")
        found = queryset.filter(name=name)
        if not at:
            return found
        return found.filter(version=int(version)) if version.isdigit() and len(version) < 10 else found.none()
