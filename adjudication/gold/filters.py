"""Filters of the gold list, page and API, applied in the database (django-filter). A value
outside a filter's choices is a form error, which the page answers 400 with."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from adjudication.gold.services import ADJUDICATED, CONVENTION, UNANIMOUS
from adjudication.models import GoldItem
from annotator.search import search_filter
from nsmcore.schema import SLOT_NAMES

REVIEW = "review"


class GoldFilter(django_filters.FilterSet):
    """The gold list: by status (or "to review"), by the first construal's routed label, and by
    provenance (any slot of any construal set that way)."""

    status = django_filters.ChoiceFilter(
        choices=[("open", _("open")), ("resolved", _("resolved")), (REVIEW, _("to review"))],
        method="filter_status",
        empty_label=_("any"),
    )
    label = django_filters.CharFilter(method="filter_label", max_length=32)
    source = django_filters.ChoiceFilter(
        choices=[(UNANIMOUS, _("unanimous")), (CONVENTION, _("convention")), (ADJUDICATED, _("adjudicated"))],
        method="filter_source",
        empty_label=_("any"),
        label=_("provenance"),
    )
    q = search_filter(field="item_id")

    class Meta:
        model = GoldItem
        fields: list[str] = []

    def filter_status(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        if value == REVIEW:
            return queryset.filter(needs_review=True)
        return queryset.filter(status=value)

    def filter_label(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(construals__index=1, construals__label=value)

    def filter_source(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        # provenance is {slot: {"source": ...}}: the twelve slots are the only keys
        any_slot = Q()
        for slot in SLOT_NAMES:
            any_slot |= Q(**{f"construals__provenance__{slot}__source": value})
        return queryset.filter(pk__in=GoldItem.objects.filter(any_slot).values("pk"))
