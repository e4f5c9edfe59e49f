"""The page's form for a new hook: its URL and the events it wants (checkboxes; "every event"
stands for all, those to come included). webhooks.services checks both and names what is wrong."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from webhooks.models import ALL, EVENTS, URL_MAX


def event_choices() -> list[tuple[str, str]]:
    return [(ALL, _("every event")), *((name, f"{name}: {label}") for name, label in EVENTS.items())]


class WebhookForm(forms.Form):
    url = forms.CharField(
        max_length=URL_MAX,
        label=_("URL"),
        help_text=_(
            "http or https; each event is POSTed there as JSON. Not this machine or a private network, "
            "unless the server allows it (NSM_WEBHOOK_ALLOW_PRIVATE)."
        ),
        widget=forms.TextInput(
            attrs={"size": 60, "inputmode": "url", "placeholder": "https://example.org/nsm-hook"}
        ),
    )
    events = forms.MultipleChoiceField(
        choices=event_choices,
        label=_("Events"),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("choose at least one event, or every event")},
    )
