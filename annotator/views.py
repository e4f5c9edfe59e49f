from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

import nsmcore
from annotator.roles import ADMIN, has_role
from annotator.round_selectors import first_run_steps
from nsmcore.guidance import SLOT_HELP, VALUE_HELP
from nsmcore.schema import GROUPS, SLOTS
from rules.rulesets import active_rule_set


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    rule_set = active_rule_set()
    steps = first_run_steps() if has_role(request.user, ADMIN) else None
    return render(request, "annotator/home.html", {"rule_set": rule_set, "first_run": steps})


def _slot_groups(values: dict[str, str]) -> list[dict[str, object]]:
    return [
        {
            "name": group,
            "slots": [
                {"slot": slot, "value": values.get(slot.name, slot.default)}
                for slot in SLOTS
                if slot.group == group
            ],
        }
        for group in GROUPS
    ]


NOTES: dict[str, str] = {
    "experiencer": _("Almost all items are i."),
    "trigger": _(
        "A person did something includes the writer: 'I passed my exam', "
        "'I got the position' when someone gave it."
    ),
    "time_direction": _("A completed event narrated in the present tense is still before-now."),
    "evaluation": _(
        "Calibrated exception: a bare, plainly negative life event (a divorce, a death, "
        "being fired) takes feel-bad even without feeling words."
    ),
    "knowledge": _(
        "Use not-know only when the text explicitly marks the unexpectedness ('out of "
        "nowhere', 'I didn't expect', 'suddenly found out'); a discovery framing alone is not enough."
    ),
}


def guideline_slots() -> list[dict[str, object]]:
    """Each slot's help, note and values as the guidelines page shows them (the page itself is the
    conventions feature's, adjudication.conventions.views.guidelines: accepted conventions join it)."""
    return [
        {
            "name": slot.name,
            "group": slot.group,
            "help": SLOT_HELP[slot.name],
            "note": NOTES.get(slot.name, ""),
            "values": [
                {"value": v, "help": VALUE_HELP[slot.name][v], "default": v == slot.default}
                for v in slot.values
            ],
        }
        for slot in SLOTS
    ]


@login_required
@require_GET
def explain(request: HttpRequest) -> HttpResponse:
    """The explication sandbox: choose slot values, read the prime lines and the routed label.

    Values come from the query string (missing slots take their defaults) so that a state can be
    shared as a link; with htmx only the preview fragment is rendered.
    """
    values = {slot.name: request.GET.get(slot.name, slot.default) for slot in SLOTS}
    obj = {**values, "residue": request.GET.get("residue", "")}
    explication, problems = nsmcore.check(obj)
    context = {
        "groups": _slot_groups(values),
        "residue": obj["residue"],
        "lines": nsmcore.render(explication) if explication else [],
        "routing": nsmcore.route(obj, active_rule_set()),
        "problems": problems,
    }
    template = "annotator/_preview.html" if request.htmx else "annotator/explain.html"
    return render(request, template, context)
