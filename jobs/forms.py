"""What every form that starts a job may share: the choice of an item set or a round. Each kind's
form lives in its feature app (named by its JobKind's ``form``); it validates what the page and the
API (which runs the same form: jobs.api.FormIn) may ask for, and ``start(user=...)`` starts its job
from the cleaned data, so the page and the API start the same job from the same rules."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from django import forms
from django.forms.utils import pretty_name
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotator.models import ItemSet, Round
from jobs.kinds import Params


def target_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    sets = [
        (
            f"set:{s.pk}",
            ngettext("%(name)s (%(size)s item)", "%(name)s (%(size)s items)", s.size)
            % {"name": s.name, "size": s.size},
        )
        for s in ItemSet.objects.order_by("name")
    ]
    rounds = [
        (f"round:{r.pk}", f"{r.name} ({r.get_mode_display()}, {r.item_set.name})")
        for r in Round.objects.select_related("item_set").order_by("name")
    ]
    return [(_("Item sets"), sets), (_("Rounds"), rounds)]


class TargetMixin:
    """A choice of item set or round, given as ``set:<id>`` or ``round:<id>``."""

    def clean_target(self):
        kind, _colon, pk = self.cleaned_data["target"].partition(":")
        model = Round if kind == "round" else ItemSet
        try:
            return model.objects.get(pk=int(pk))
        except (ValueError, model.DoesNotExist):
            raise forms.ValidationError(_("no such item set or round")) from None

    def scope(self) -> dict:
        """The cleaned target as the services take it."""
        target = self.cleaned_data["target"]
        return {"round_": target} if isinstance(target, Round) else {"item_set": target}


def setting_field(params: type[Params], name: str, **overrides: Any) -> forms.Field:
    """The form field of a kind's parameter, from its one declaration (jobs.kinds.setting): its type,
    default, bounds, label and help (each translated when shown: the declaration marks them with
    gettext_noop, as the command's help reads them untranslated); ``overrides`` go to the field as
    they are (a widget...)."""
    field = next(f for f in dataclasses.fields(params) if f.name == name)
    meta, kind = field.metadata, typing.get_type_hints(params)[name]
    help_text = meta.get("help", "")
    options: dict[str, Any] = {
        "initial": field.default,
        "help_text": gettext_lazy(help_text) if help_text else "",
        "label": gettext_lazy(meta.get("label") or pretty_name(name)),
    }
    if kind is bool:
        return forms.BooleanField(**{"required": False, **options, **overrides})
    bounds = {"min_value": meta.get("min"), "max_value": meta.get("max")}
    if kind is int:
        return forms.IntegerField(**{**bounds, **options, **overrides})
    if kind is float:
        return forms.FloatField(**{**bounds, **options, **overrides})
    return forms.CharField(**{"required": False, **options, **overrides})
