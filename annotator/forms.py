"""Forms of the admin pages (users and rounds) and of the annotation workspace."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from annotator.converters import ID_DIGITS
from annotator.models import FLAGS, SLOT_FIELDS, ItemSet, Round
from annotator.roles import ROLES
from annotator.round_selectors import annotator_choices, parser_coverage, parsers_of_other_fields
from annotator.services import TEXT_MAX_CHARS, TIME_SPENT_MAX_MS, VERSION_MAX

ROLE_CHOICES = [(role, role) for role in ROLES]


class UserCreateForm(forms.Form):
    username = forms.CharField(max_length=150, label=_("Username"))
    email = forms.EmailField(required=False, label=_("Email"))
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput,
        label=_("Password"),
        help_text=_("leave empty to generate one, shown once"),
    )
    roles = forms.MultipleChoiceField(
        choices=ROLE_CHOICES, required=False, widget=forms.CheckboxSelectMultiple, label=_("Roles")
    )


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, required=False)


class ActiveForm(forms.Form):
    active = forms.TypedChoiceField(
        choices=[("1", _("active")), ("0", _("inactive"))], coerce=lambda v: v == "1"
    )


class AnnotatorChoice(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: User) -> str:
        return obj.get_username()

    def clean(self, value: Any) -> Any:
        # Django looks the ids up with ``pk__in``, which hands the database a number it cannot
        # store (SQLite raises OverflowError): such an id is no user's, and is refused as one
        for pk in value if isinstance(value, list | tuple) else ():
            if isinstance(pk, str | int) and str(pk).isdigit() and len(str(pk)) > ID_DIGITS:
                raise ValidationError(
                    self.error_messages["invalid_choice"], code="invalid_choice", params={"value": pk}
                )
        return super().clean(value)


class RoundForm(forms.Form):
    """A round. The parser choices depend on the item set and the text shown: those with legal
    predictions for any of its items read from that text, each with how many it covers."""

    name = forms.CharField(max_length=100, label=_("Name"))
    item_set = forms.ModelChoiceField(ItemSet.objects.order_by("name"), label=_("Item set"))
    annotators_per_item = forms.IntegerField(min_value=1, initial=2, label=_("Annotators per item"))
    annotators = AnnotatorChoice(
        queryset=User.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label=_("Annotators"),
        help_text=_("users with the annotator role"),
    )
    mode = forms.ChoiceField(
        choices=Round.Mode.choices, initial=Round.Mode.BLIND, widget=forms.RadioSelect, label=_("Mode")
    )
    prefill_parser = forms.ChoiceField(
        required=False, label=_("Parser for the prefill"), help_text=_("prefilled rounds only")
    )
    text_field = forms.ChoiceField(
        choices=Round.TEXT_FIELDS, initial=Round.TEXT_MASKED, label=_("Text shown")
    )
    show_routed_label = forms.BooleanField(
        required=False,
        label=_("Show annotators the routed label"),
        help_text=_("anchors them; off by default"),
    )
    confirm_overlap = forms.BooleanField(
        required=False,
        label=_("Create it anyway"),
        help_text=_("a round mixing prefill with the blind control arm, either way, leaves it unclean"),
    )

    def __init__(
        self, *args: Any, item_set: ItemSet | None = None, text_field: str = Round.TEXT_MASKED, **kwargs: Any
    ):
        super().__init__(*args, **kwargs)
        self.fields["annotators"].queryset = annotator_choices()
        # only parsers that read the text the round shows are offered; the others are named apart
        field = text_field if text_field in dict(Round.TEXT_FIELDS) else Round.TEXT_MASKED
        self.coverage = parser_coverage(item_set, field) if item_set is not None else []
        self.other_fields = parsers_of_other_fields(item_set, field) if item_set is not None else {}
        self.fields["prefill_parser"].choices = [("", _("none (blind)"))] + [
            (c.parser, c.label()) for c in self.coverage
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("mode") == Round.Mode.PREFILLED and not data.get("prefill_parser"):
            self.add_error(
                "prefill_parser", _("a prefilled round needs a parser with predictions for this set")
            )
        return data


class PoolForm(forms.Form):
    annotator = forms.ModelChoiceField(queryset=User.objects.none(), label=_("Annotator"))

    def __init__(self, *args: Any, queryset: Any = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["annotator"].queryset = queryset if queryset is not None else annotator_choices()


class AnnotationValuesForm(forms.Form):
    """The values of an annotation as the workspace posts them: the slots, residue, notes and
    flags. The form checks their shape (a flag of the list, a value of bounded length); whether
    the values make an explication is nsmcore's check, in the service, which names slot and
    allowed values."""

    residue = forms.CharField(required=False, strip=False, max_length=TEXT_MAX_CHARS)
    notes = forms.CharField(required=False, strip=False, max_length=TEXT_MAX_CHARS)
    flags = forms.MultipleChoiceField(choices=[(f, f) for f in FLAGS], required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in SLOT_FIELDS:
            self.fields[name] = forms.CharField(required=False, max_length=64)

    def values(self) -> dict[str, Any]:
        """The values to submit (cleaned), or, for a form with errors, as posted (to show them
        again beside the errors)."""
        if self.is_valid():
            data = self.cleaned_data
            return {**{name: data[name] for name in SLOT_FIELDS}, "residue": data["residue"],
                    "notes": data["notes"], "flags": data["flags"]}  # fmt: skip
        posted = self.data
        values: dict[str, Any] = {name: posted.get(name, "") for name in (*SLOT_FIELDS, "residue", "notes")}
        values["flags"] = posted.getlist("flags") if hasattr(posted, "getlist") else posted.get("flags", [])
        return values

    def problems(self) -> dict[str, str]:
        return {field: "; ".join(messages) for field, messages in self.errors.items()}


class SkippedQuery(forms.Form):
    """?skipped=ID after a skip: the item the next page offers to take back."""

    skipped = forms.IntegerField(required=False, min_value=1, max_value=2**31 - 1)


class DraftForm(AnnotationValuesForm):
    """What the page sends as the annotator works: the values as they stand, and the version the
    page was loaded at."""

    base_version = forms.IntegerField(min_value=0, max_value=VERSION_MAX)


class SubmitForm(AnnotationValuesForm):
    """An annotation submit: its values and its bookkeeping.

    ``replace_version`` comes only from the "Replace it with mine" button of a stale-save page: it
    names the saved version the annotator chose to overwrite after comparing it with theirs."""

    base_version = forms.IntegerField(min_value=0, max_value=VERSION_MAX)
    time_spent_ms = forms.IntegerField(min_value=0, max_value=TIME_SPENT_MAX_MS, required=False)
    replace_version = forms.IntegerField(min_value=1, max_value=VERSION_MAX, required=False)
