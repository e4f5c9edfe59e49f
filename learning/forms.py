from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import ParserPrediction, Round
from learning.models import QueuePolicy
from nsmcore.queue_orders import DEFAULT_RANDOM_SHARE


class QueuePolicyForm(forms.Form):
    """A round's queue settings (learning.services.queue_policy_set checks them again)."""

    order = forms.ChoiceField(
        label=_("Order"), choices=QueuePolicy.Order.choices, initial=QueuePolicy.Order.MIXED
    )
    random_share = forms.FloatField(
        label=_("Random share"),
        min_value=0.01,
        max_value=0.99,
        initial=DEFAULT_RANDOM_SHARE,
        help_text=_("of a mixed queue, drawn at random with the seed: unbiased figures use only these"),
    )
    seed = forms.IntegerField(label=_("Seed"), min_value=0, initial=0)
    parser = forms.ChoiceField(
        label=_("Parser"),
        required=False,
        help_text=_(
            "whose per-slot posteriors rank the items; empty: the round's prefill parser, else the newest"
        ),
    )
    retrain_every = forms.IntegerField(
        label=_("Retrain every"),
        min_value=0,
        max_value=1_000_000,
        initial=0,
        help_text=_("new gold items, then recompute the queue (0: never)"),
    )

    def __init__(self, *args, round_: Round, **kwargs):
        super().__init__(*args, **kwargs)
        names = (
            ParserPrediction.objects.filter(item__item_sets=round_.item_set)
            .order_by("parser")
            .values_list("parser", flat=True)
            .distinct()
        )
        self.fields["parser"].choices = [("", _("(the round's prefill parser, else the newest)"))] + [
            (n, n) for n in names
        ]


class SimulateForm(forms.Form):
    seeds = forms.IntegerField(label=_("Seeds"), min_value=1, max_value=20, initial=5)
    start = forms.IntegerField(label=_("Items to start from"), min_value=1, initial=20)
    batch = forms.IntegerField(label=_("Items per batch"), min_value=1, initial=10)
