"""The active rule set of the mapper and figures about it that pages show."""

from __future__ import annotations

from typing import Any

from django.conf import settings

import nsmcore
from nsmcore.regression import run_suite


def active_rule_set() -> nsmcore.RuleSet:
    return nsmcore.load_rule_set(settings.NSM_RULE_SET)


# Keyed by content hash: regions and the suite depend only on what the rules say.
_SUMMARIES: dict[str, dict[str, Any]] = {}


def rule_set_summary(rule_set: nsmcore.RuleSet) -> dict[str, Any]:
    """Region sizes over the full space and the regression suite report (computed once)."""
    key = rule_set.content_hash
    if key not in _SUMMARIES:
        _SUMMARIES[key] = {"regions": nsmcore.regions(rule_set), "suite": run_suite(rule_set)}
    return _SUMMARIES[key]
