"""Forms of the adjudication pages: every POST is read through one, so that a bad value is named
(field and message) and answered 400 before any service writes."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from adjudication.evaluation.figures import EvaluationRequestError, item_set_named, options_from
from adjudication.evaluation.parser import heldout_named
from adjudication.models import Convention
from annotator.models import ItemSet, Round
from annotator.search import search_field
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES, SLOTS


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


class ProposeForm(forms.Form):
    """A convention's dispute, picked from lists: the twelve slots, and the values of the chosen
    slot (the page swaps those in with htmx when the slot changes). A value outside the slot's set
    is refused here, naming it and the allowed ones."""

    VALUE_FIELDS = ("value_a", "value_b", "chosen")

    round = forms.ModelChoiceField(Round.objects.order_by("name"), label=gettext_lazy("Round"))
    slot = forms.ChoiceField(
        label=gettext_lazy("Slot"),
        choices=[("", gettext_lazy("choose a slot…"))] + [(s, s) for s in SLOT_NAMES],
    )
    value_a = forms.ChoiceField(label=gettext_lazy("one value"))
    value_b = forms.ChoiceField(label=gettext_lazy("the other value"))
    chosen = forms.ChoiceField(
        label=gettext_lazy("the slot takes"),
        help_text=gettext_lazy("one of the two values"),
        error_messages={"required": gettext_lazy("the slot takes: choose one of the two values")},
    )
    rule = forms.CharField(
        label=gettext_lazy("Rule"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=gettext_lazy("the convention in words"),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # where the proposal came from (a flow, or a conflict and its item): kept as its source
        self.fields["from"] = forms.ChoiceField(
            choices=[("", ""), ("flow", "flow"), ("conflict", "conflict")], required=False
        )
        self.fields["item"] = forms.CharField(required=False, max_length=64)
        slot = (self.data if self.is_bound else self.initial).get("slot", "")
        values = SLOT_BY_NAME[slot].values if slot in SLOT_BY_NAME else ()
        self.fields["slot"].widget.attrs.update(
            {"hx-get": reverse("conventions"), "hx-trigger": "change", "hx-target": "#convention-values",
             "hx-swap": "outerHTML"}
        )  # fmt: skip
        # no slot yet: every slot's values, grouped, so that the page works without JavaScript
        listed = [(v, v) for v in values] or [(s.name, [(v, v) for v in s.values]) for s in SLOTS]
        for name in self.VALUE_FIELDS:
            field = self.fields[name]
            field.choices = [("", _("choose…")), *listed]
            if values:
                field.error_messages["invalid_choice"] = keeping_value(
                    _("%(value)s is not a value of %(slot)s; allowed: %(allowed)s"),
                    slot=slot,
                    allowed=", ".join(values),
                )

    def source(self) -> dict[str, str]:
        return {k: self.cleaned_data[k] for k in ("from", "item") if self.cleaned_data.get(k)}


class VoteForm(forms.Form):
    approve = forms.ChoiceField(
        choices=[("yes", gettext_lazy("approve")), ("no", gettext_lazy("reject"))],
        error_messages={
            "required": gettext_lazy("choose approve or reject"),
            "invalid_choice": gettext_lazy("choose approve or reject"),
        },
    )
    comment = forms.CharField(required=False, max_length=2000)


class ReviseForm(forms.Form):
    """A revision of an accepted convention: which of its two values the slot now takes, and why."""

    chosen = forms.ChoiceField(choices=())
    rule = forms.CharField(
        max_length=5000, error_messages={"required": gettext_lazy("write the revised convention in words")}
    )

    def __init__(self, *args: Any, convention: Convention, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pair = (convention.value_a, convention.value_b)
        self.fields["chosen"].choices = [(v, v) for v in pair]
        self.fields["chosen"].error_messages["invalid_choice"] = keeping_value(
            _("%(value)s is not one of the disputed values (%(a)s or %(b)s)"), a=pair[0], b=pair[1]
        )


class ResolveForm(forms.Form):
    """The gold item's resolve form: a value per slot (empty keeps the current one), and, when two
    construals are kept, the second's values (empty: as the first). A value outside its slot is
    refused here by name; whether every slot ends up set is the service's check."""

    two_construals = forms.BooleanField(required=False)
    why = forms.CharField(required=False, max_length=5000)
    # the record's version when the page was read: a save over a newer one is refused (409)
    base_version = forms.IntegerField(required=False, min_value=0, max_value=2**31 - 1)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        keep = _("keep")
        for slot in SLOTS:
            # the service's wording, so that the page reads the same either way
            refused = keeping_value(
                _("'%(value)s' is not an allowed value; allowed: %(allowed)s"), allowed=", ".join(slot.values)
            )
            for name in (slot.name, f"second_{slot.name}"):
                self.fields[name] = forms.ChoiceField(
                    choices=[("", keep), *((v, v) for v in slot.values)],
                    required=False,
                    error_messages={"invalid_choice": refused},
                )

    def slots(self) -> tuple[dict[str, str], dict[str, str] | None]:
        """The slots set on the first construal, and the second's (None: one construal)."""
        data = self.cleaned_data
        first = {name: data[name] for name in SLOT_NAMES if data.get(name)}
        if not data["two_construals"]:
            return first, None
        return first, {name: data[f"second_{name}"] for name in SLOT_NAMES if data.get(f"second_{name}")}


class GoldOpenForm(forms.Form):
    """The button that opens gold records for items whose annotations are all in; ``next`` is the
    page it came from (a path on this site; anything else goes back to the gold list)."""

    next = forms.CharField(required=False, max_length=2000)

    def next_url(self, round_: Round) -> str:
        target = self.cleaned_data.get("next", "") if self.is_valid() else ""
        if target and url_has_allowed_host_and_scheme(target, allowed_hosts=None) and target.startswith("/"):
            return target
        return reverse("gold_list", args=[round_.pk])


class JudgementMarkForm(forms.Form):
    line = forms.CharField(max_length=5000)
    entailed = forms.ChoiceField(
        choices=[("yes", gettext_lazy("entailed")), ("no", gettext_lazy("not entailed"))],
        error_messages={
            "required": gettext_lazy("say entailed=yes or entailed=no"),
            "invalid_choice": gettext_lazy("say entailed=yes or entailed=no"),
        },
    )
    page = forms.IntegerField(min_value=1, required=False)


# Query strings of the analytics pages: each page reads its ?... through one of these, so that a
# bad value is a 400 naming it, and its CSV download (its own view) reads the same form.


class AgreementQuery(forms.Form):
    intensity = forms.ChoiceField(
        choices=[("", gettext_lazy("nominal")), ("ordinal", gettext_lazy("ordinal"))], required=False,
        help_text="intensity's agreement as an ordinal scale (the other slots are nominal)",
    )  # fmt: skip

    item_set = forms.CharField(
        required=False, max_length=100,
        help_text="only the round's items in this item set (a queue's random share: unbiased figures)",
    )  # fmt: skip

    def levels(self) -> dict[str, str]:
        return {"intensity": "ordinal"} if self.cleaned_data["intensity"] == "ordinal" else {}

    def clean_item_set(self) -> ItemSet | None:
        name = self.cleaned_data.get("item_set", "")
        if not name:
            return None
        found = ItemSet.objects.filter(name=name).first()
        if found is None:
            raise forms.ValidationError(
                _("item_set %(name)s: there is no item set of that name") % {"name": repr(name)}
            )
        return found


class ConflictQuery(forms.Form):
    """Conflicts of one slot (empty: any), and of one value pair (a, b: values of that slot); the
    page, API and CSV read it alike."""

    slot = forms.ChoiceField(
        choices=[("", gettext_lazy("any slot"))] + [(s, s) for s in SLOT_NAMES], required=False
    )
    a = forms.CharField(required=False, max_length=40)
    b = forms.CharField(required=False, max_length=40)
    q = search_field()
    page = forms.IntegerField(required=False, min_value=1)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["slot"].error_messages["invalid_choice"] = keeping_value(
            _("unknown slot %(value)r; slots: %(slots)s"), slots=", ".join(SLOT_NAMES)
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        slot = data.get("slot", "")
        for name in ("a", "b"):
            value = data.get(name, "")
            if value and not slot:
                self.add_error(name, _("a value needs its slot: give ?slot= too"))
            elif value and slot and value not in SLOT_BY_NAME[slot].values:
                allowed = ", ".join(SLOT_BY_NAME[slot].values)
                self.add_error(
                    name,
                    _("%(value)s is not a value of %(slot)s; its values: %(allowed)s")
                    % {"value": repr(value), "slot": slot, "allowed": allowed},
                )
        return data


class FlowQuery(forms.Form):
    """Two passes of the round (or of a round over the same items) to compare; left out, the
    round's first two."""

    a = forms.ChoiceField(required=False)
    b = forms.ChoiceField(required=False)

    def __init__(self, data, *, passes: list[tuple[str, str]], defaults: tuple[str, str]):
        super().__init__(data)
        for name, default in zip(("a", "b"), defaults, strict=True):
            self.fields[name].choices = [("", ""), *passes]
            self.fields[name].initial = default

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for name in ("a", "b"):
            data[name] = data.get(name) or self.fields[name].initial
        return data


class AnchoringQuery(forms.Form):
    """A blind round over the same items to compare with (its id); left out, none."""

    control = forms.IntegerField(required=False, min_value=1)


def refused_query(request: HttpRequest, form: forms.Form, *, csv: bool = False) -> HttpResponse:
    """A 400 naming each bad value of a page's query string: the site's page, or for a CSV
    download one plain line."""
    problem = _("bad query: %(problems)s") % {"problems": form_problems(form)}
    if csv:
        return HttpResponse(problem, status=400, content_type="text/plain; charset=utf-8")
    return render(request, "400.html", {"problem": problem}, status=400)


class EvaluationQuery(forms.Form):
    """The Evaluation page's query string: the pass (left out, the round's first) and a pass to
    compare, the item set to score on, the held-out set of a parser pass, and the scoring options
    (adjudication.evaluation.options_from). Each bad value is named; the options, the item sets
    and the passes come back cleaned (``options``, ``item_set``, ``heldout``, ``pass``)."""

    compare = forms.CharField(required=False, max_length=200)
    item_set = forms.CharField(required=False, max_length=200)
    heldout = forms.CharField(required=False, max_length=200)

    def __init__(self, data, *, default_pass: str, rule_set):
        super().__init__(data)
        self.fields["pass"] = forms.CharField(required=False, max_length=200)  # a keyword: not declarable
        self.default_pass, self.rule_set = default_pass, rule_set

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["pass"] = data.get("pass") or self.default_pass
        try:
            data["options"] = options_from(self.data, self.rule_set)
            data["item_set"] = item_set_named(data.get("item_set", ""))
            data["heldout"] = heldout_named(data.get("heldout", ""))
        except EvaluationRequestError as error:
            raise forms.ValidationError(str(error)) from None
        if data.get("compare") and data["compare"] == data["pass"]:
            raise forms.ValidationError(
                _("compare is the same pass as pass (%(pass)s): choose another pass") % {"pass": data["pass"]}
            )
        return data
