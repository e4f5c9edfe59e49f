"""Filters of the jobs API's lists, applied in the database (django-filter): a bad value is a 400
naming the parameter."""

from __future__ import annotations

import django_filters

from annotator.models import Round
from jobs.kinds import kinds
from jobs.models import Job


def kind_choices() -> list[tuple[str, str]]:
    """The registered kinds (read when asked: each feature registers its own)."""
    return [(name, kind.label) for name, kind in sorted(kinds().items())]


class RegisteredKinds:
    """The registered kinds, read each time they are gone through: when a request's filter form is
    built, and when the schema lists them (drf-spectacular lists no choices given as a function)."""

    def __iter__(self):
        return iter(kind_choices())


class JobFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=RegisteredKinds(), help_text="a registered kind of job")
    status = django_filters.ChoiceFilter(choices=Job.Status.choices)
    round = django_filters.ModelChoiceFilter(queryset=Round.objects.all(), help_text="a round's id")

    class Meta:
        model = Job
        fields: list[str] = []
