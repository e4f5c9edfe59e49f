from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from nsmcore.schema import SLOTS
from rules.models import RuleSetActivation, RuleSetVersion
from rules.rulesets import active_rule_set, rule_set_summary


@login_required
@require_GET
def rule_set_detail(request: HttpRequest) -> HttpResponse:
    """The active rule set (its rules in priority order, region sizes and regression status), every
    stored version and the history of activations, newest first."""
    rule_set = active_rule_set()
    summary = rule_set_summary(rule_set)
    regions = summary["regions"]
    total = regions["total"]
    largest = max([*regions["regions"].values(), regions["abstain"]])
    rows = []
    for k, rule in enumerate(rule_set.rules):
        conditions = rule.as_dict()["conditions"]
        rows.append(
            {
                "index": k,
                "emotion": rule.emotion,
                "conditions": [
                    (slot.name, conditions[slot.name]) for slot in SLOTS if slot.name in conditions
                ],
                "region": regions["regions"][rule.emotion],
                "satisfied": regions["satisfied"][rule.emotion],
                "percent": 100 * regions["regions"][rule.emotion] / total,
                "bar": 100 * regions["regions"][rule.emotion] / largest,
                "shadowed": regions["satisfied"][rule.emotion] - regions["regions"][rule.emotion],
            }
        )
    context = {
        "rule_set": rule_set,
        "rows": rows,
        "regions": regions,
        "abstain_percent": 100 * regions["abstain"] / total,
        "abstain_bar": 100 * regions["abstain"] / largest,
        "suite": summary["suite"],
        "versions": RuleSetVersion.objects.select_related("created_by", "parent"),
        "history": RuleSetActivation.objects.select_related("version", "previous", "by"),
    }
    return render(request, "rules/rule_set.html", context)
