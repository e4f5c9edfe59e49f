"""Free-text search over items, as the lists (items of an item set, conflicts, gold) and the API
offer it: ``?q=`` holds words, each of which an item's id, text or masked text must hold (as a
word or the start of one). The database does the work (annotator.queries.item_search)."""

from __future__ import annotations

import re

import django_filters
from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from annotator.models import Item
from annotator.queries import item_search, item_search_condition

#: at most this many words are searched; a longer query is refused, not cut
MAX_TERMS = 8
SEARCH_HELP = "words an item's id or text must all hold (each as a word or its start)"
_WORD = re.compile(r"[^\W_]+")


def search_terms(q: str) -> list[str]:
    """The words of a query, lower-cased; punctuation and operators are dropped."""
    return [word.lower() for word in _WORD.findall(q)]


def clean_search(q: str) -> str:
    """A query as given, or a ValidationError naming the problem."""
    q = q.strip()
    terms = search_terms(q)
    if q and not terms:
        raise forms.ValidationError(_("search for words (letters or digits)"))
    if len(terms) > MAX_TERMS:
        raise forms.ValidationError(_("search for at most %(n)s words") % {"n": MAX_TERMS})
    return q


SEARCH_OPTIONS = {
    "max_length": 200,
    "validators": [clean_search],
    "help_text": SEARCH_HELP,
    "label": "search",
}


def search_field() -> forms.CharField:
    """The ``q`` field of a page's query form."""
    return forms.CharField(required=False, **SEARCH_OPTIONS)


def search_filter(*, field: str = "pk") -> django_filters.CharFilter:
    """The ``q`` filter of a list's FilterSet (``field`` names the item id in its rows)."""
    return django_filters.CharFilter(
        method=lambda queryset, name, value: items_searched(queryset, value, field=field), **SEARCH_OPTIONS
    )


def items_searched(queryset: QuerySet, q: str, *, field: str = "pk") -> QuerySet:
    """``queryset`` narrowed to the items ``q`` finds (``field`` names the item id in it)."""
    terms = search_terms(q)
    if not terms:
        return queryset
    if field == "pk" and queryset.model is Item and (condition := item_search_condition(terms)) is not None:
        return queryset.filter(condition)
    return queryset.filter(**{f"{field}__in": item_search(terms)})
