"""The comment form of the pages: the text, the comment it answers (a reply) and the page to go
back to without JavaScript. The form reads them; discussion.services checks the text and the
comment replied to, once for the page, the API and the command."""

from __future__ import annotations

from django import forms
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _

from annotator.filters import MAX_ID
from discussion.text import normalise_newlines


def _flag(value: str) -> bool:
    return value in ("true", "1")


class NotificationQuery(forms.Form):
    """The notifications' query string, the page's and the API's: ``unread`` true (or 1) for the
    unread ones only."""

    unread = forms.TypedChoiceField(
        required=False,
        choices=[(value, value) for value in ("true", "false", "1", "0")],
        coerce=_flag,
        empty_value=False,
        error_messages={"invalid_choice": _("true or false")},
    )


class CommentForm(forms.Form):
    # not required, not stripped: the service says what is wrong with a blank or long text
    body = forms.CharField(required=False, strip=False, label=_("Comment"))
    reply_to = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        error_messages={"invalid": _("not a comment's id")},
    )
    next = forms.CharField(required=False, max_length=2000)

    def clean_body(self) -> str:
        return normalise_newlines(self.cleaned_data.get("body") or "")

    def next_url(self) -> str:
        """``next`` when it is a path on this site, else ""."""
        target = self.data.get("next", "")
        if (
            isinstance(target, str)
            and len(target) <= 2000
            and target.startswith("/")
            and url_has_allowed_host_and_scheme(target, allowed_hosts=None)
        ):
            return target
        return ""

    def problems(self) -> dict[str, str]:
        return {name: " ".join(messages) for name, messages in self.errors.items()}
