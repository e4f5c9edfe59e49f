"""The quality page's settings form (quality.services.quality_settings_set checks the values
again: the API and the command reach it without this form)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import Round
from quality.models import HOURS_MAX, MIN_ANSWERED_MAX, NUDGE_SECONDS_MAX, RATE_MAX, QualitySettings


class QualitySettingsForm(forms.Form):
    control_source = forms.ModelChoiceField(
        label=_("Control items from"),
        queryset=Round.objects.none(),
        required=False,
        empty_label=_("(resolved gold of any other round)"),
        help_text=_("resolved gold items of this round, outside this round's item set, are the controls"),
    )
    control_rate = forms.FloatField(
        label=_("Control rate"),
        min_value=0,
        max_value=RATE_MAX,
        help_text=_("controls per annotator as a share of their items (0.05: one in twenty; 0: none)"),
    )
    threshold = forms.FloatField(
        label=_("Alert threshold"),
        min_value=0,
        max_value=1,
        help_text=_("accuracy on controls below it alerts"),
    )
    measure = forms.ChoiceField(label=_("Accuracy measure"), choices=QualitySettings.Measure.choices)
    min_answered = forms.IntegerField(
        label=_("Answered controls before an alert"), min_value=1, max_value=MIN_ANSWERED_MAX
    )
    abandon_hours = forms.IntegerField(
        label=_("Abandoned after (hours)"),
        min_value=0,
        max_value=HOURS_MAX,
        help_text=_(
            "an opened assignment with no draft and no save for this long goes back to the pool (0: never)"
        ),
    )
    nudge = forms.BooleanField(
        label=_("Nudge a prefill kept whole too fast"),
        required=False,
        help_text=_("a gentle notice after a save that kept all twelve prefilled values"),
    )
    nudge_seconds = forms.IntegerField(
        label=_("Too fast: under (seconds)"), min_value=1, max_value=NUDGE_SECONDS_MAX
    )

    def __init__(self, *args, round_: Round, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["control_source"].queryset = Round.objects.exclude(pk=round_.pk).order_by("name")

    @classmethod
    def of(cls, settings: QualitySettings) -> QualitySettingsForm:
        fields = cls.base_fields
        initial = {name: getattr(settings, name) for name in fields}
        return cls(initial=initial, round_=settings.round)
