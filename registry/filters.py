"""Filters of the registry API's list, applied in the database (django-filter): a bad value is a
400 naming the parameter."""

from __future__ import annotations

import django_filters
from django.db.models import QuerySet

from annotator.filters import typed_id
from registry.models import VERSION_MAX, RegisteredParser


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
        number = typed_id(version, limit=VERSION_MAX)
        return found.filter(version=number) if number is not None else found.none()
