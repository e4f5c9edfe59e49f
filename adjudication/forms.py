"""Forms shared by the adjudication features: every POST and query string is read through a form,
so that a bad value is named (field and message) and answered 400 before any service writes. Each
feature keeps its own forms beside its views (``adjudication/<feature>/forms.py``); here are the
helpers they share and the vote form of conventions and rule revisions."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy


def keeping_value(message: str, **values: Any) -> str:
    """A translated error message with its own placeholders filled in, all but ``%(value)...``,
    which the form field fills in later with the value it refused."""
    for name, value in values.items():
        message = message.replace(f"%({name})s", str(value).replace("%", "%%"))
    return message


def form_problems(form: forms.Form) -> str:
    """A form's errors as one line, each named by its field: "approve: choose approve or reject"."""
    return "; ".join(
        f"{name}: {message}" if name != "__all__" else message
        for name, messages in form.errors.items()
        for message in messages
    )


class VoteForm(forms.Form):
    approve = forms.ChoiceField(
        choices=[("yes", gettext_lazy("approve")), ("no", gettext_lazy("reject"))],
        error_messages={
            "required": gettext_lazy("choose approve or reject"),
            "invalid_choice": gettext_lazy("choose approve or reject"),
        },
    )
    comment = forms.CharField(required=False, max_length=2000)


def refused_query(request: HttpRequest, form: forms.Form, *, csv: bool = False) -> HttpResponse:
    """A 400 naming each bad value of a page's query string: the site's page, or for a CSV
    download one plain line."""
    problem = _("bad query: %(problems)s") % {"problems": form_problems(form)}
    if csv:
        return HttpResponse(problem, status=400, content_type="text/plain; charset=utf-8")
    return render(request, "400.html", {"problem": problem}, status=400)
