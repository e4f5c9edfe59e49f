"""Checks a rule revision's regression report runs besides the suite: a tiny registry.

A feature above the rules (minimal pairs, say) knows what a new rule set would change for its own
records; the rules know no feature. So the feature registers a check from its ``AppConfig.ready``
(``register(name, fn)``) and whoever builds a revision's report calls ``run(old, new)``, which
returns one section per registered check, in the order they were registered.

A check is ``fn(old_rule_set, new_rule_set) -> dict``: a JSON-ready section with at least

- ``title``: what the section lists, in English (marked with ``gettext_noop``, so a page shows it
  in the reader's language with ``{% translate section.title %}``; the report is stored);
- ``rows``: a list of JSON-ready dicts, one per thing the revision changes (empty: nothing);
- ``columns``: ``[[key, heading], ...]``, the keys of a row to show and their headings (English,
  marked like the title), in order;

and whatever counts it wants beside them. ``run`` adds ``name`` (the registered name) and
``error`` ("" unless the check raised: then its message, with no rows, so that one broken check
never stops a proposal).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import nsmcore

log = logging.getLogger(__name__)

Check = Callable[[nsmcore.RuleSet, nsmcore.RuleSet], dict[str, Any]]

_CHECKS: dict[str, Check] = {}


def register(name: str, fn: Check) -> None:
    """Register (or replace) the check called ``name``; ``ready()`` may run more than once."""
    _CHECKS[name] = fn


def registered() -> list[str]:
    return list(_CHECKS)


def run(old_rule_set: nsmcore.RuleSet, new_rule_set: nsmcore.RuleSet) -> list[dict[str, Any]]:
    """One section per registered check: what moving from ``old_rule_set`` to ``new_rule_set``
    changes for it (see the module's note for the shape)."""
    sections: list[dict[str, Any]] = []
    for name, fn in list(_CHECKS.items()):
        try:
            section = dict(fn(old_rule_set, new_rule_set))
            section.setdefault("rows", [])
            section.setdefault("columns", [])
            section.setdefault("title", name)
            section["error"] = ""
        except Exception as error:  # a broken check is reported in its section, not raised
            log.exception("rule revision check %s failed", name)
            section = {"title": name, "rows": [], "columns": [], "error": f"{type(error).__name__}: {error}"}
        sections.append({"name": name, **section})
    return sections
