"""Filters of the annotator app's lists, applied in the database (django-filter): the API's list
endpoints use them through DRF's filter backend, so a bad value is a 400 naming the parameter."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import Q
from django.utils.translation import gettext as _
from rest_framework.exceptions import ValidationError

from annotator.models import Assignment, Item, Round
from annotator.search import search_filter

MAX_ID = 2**63 - 1  # the largest a database integer holds: beyond it SQLite raises (a 500)


def typed_id(text: str, *, limit: int = MAX_ID) -> int | None:
    """The whole number ``text`` spells in ASCII digits, if it is at most ``limit``, else None.
    str.isdigit alone takes '²', which int() refuses (a 500), and any length."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(limit)):
        return None
    number = int(text)
    return number if number <= limit else None


class IdFilter(django_filters.NumberFilter):
    """An object's id: a whole number from 1 that the database can hold, else a 400 naming the
    filter (a larger one overflows SQLite's integer: a 500); an id no row has filters everything out."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class ItemFilter(django_filters.FilterSet):
    source = django_filters.CharFilter(max_length=64)
    source_id = django_filters.CharFilter(max_length=128)
    reference_label = django_filters.CharFilter(max_length=32)
    item_set = IdFilter(field_name="item_sets", help_text="an item set's id")
    q = search_filter()

    class Meta:
        model = Item
        fields: list[str] = []


class AssignmentFilter(django_filters.FilterSet):
    round = django_filters.CharFilter(method="of_round", max_length=100, help_text="a round's name or id")
    status = django_filters.ChoiceFilter(choices=Assignment.Status.choices)

    def of_round(self, queryset, name: str, value: str):
        """The round by name, or by id; one that does not exist is a 400 naming it (an empty
        list would read as nothing left to do)."""
        pk = typed_id(value)
        match = Q(name=value) | (Q(pk=pk) if pk is not None else Q())
        ids = list(Round.objects.filter(match).values_list("pk", flat=True))
        if not ids:
            raise ValidationError(
                {"round": [_("no round named %(name)s (nor with that id)") % {"name": repr(value)}]}
            )
        return queryset.filter(round_id__in=ids)

    class Meta:
        model = Assignment
        fields: list[str] = []
