"""The active rule set of the mapper and figures about it that pages show."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache

import nsmcore
from nsmcore.regression import run_suite


def active_rule_set() -> nsmcore.RuleSet:
    return nsmcore.load_rule_set(settings.NSM_RULE_SET)


def rule_set_summary(rule_set: nsmcore.RuleSet) -> dict[str, Any]:
    """Region sizes over the full space and the regression suite report: computed once (a third
    of a second) and kept in the shared cache under the rule set's content hash, since they
    depend only on what the rules say."""
    return cache.get_or_set(
        f"nsm:rule-set-summary:{rule_set.content_hash}",
        lambda: {"regions": nsmcore.regions(rule_set), "suite": run_suite(rule_set)},
        timeout=None,
    )
