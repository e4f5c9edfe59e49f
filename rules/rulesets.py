"""The active rule set of the mapper, the stored versions, and figures about them that pages show.

The active version lives in the database (``RuleSetVersion`` with status ``active``); every
process reads it through Django's cache (one key, deleted when a transaction that activates a
version commits). ``settings.NSM_RULE_SET`` is only the packaged default: what a database with no
version yet records as its first one (the migration does it, and so does the first proposal on a
flushed database), and what is read while that table is empty.
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils.translation import gettext as _

import nsmcore
from nsmcore.mapper import RuleSetError, parse_rule_set
from nsmcore.regression import run_suite
from rules.models import RuleSetActivation, RuleSetVersion

ACTIVE_KEY = "nsm:rules:active"
#: a version's name: up to 32 ASCII letters, digits, '.', '-' or '_' (it goes into URLs and file names)
VERSION_NAME = r"^[A-Za-z0-9._-]{1,32}$"


def rule_set_document(rule_set: nsmcore.RuleSet) -> dict[str, Any]:
    """The rule set as a file says it (the v1.json format), values in the schema's order."""
    return {"version": rule_set.version, "description": rule_set.description, **rule_set.canonical()}


def rule_set_from_document(document: dict[str, Any]) -> nsmcore.RuleSet:
    return parse_rule_set(document, source=f"rule set v{document.get('version', '?')}")


def packaged_rule_set() -> nsmcore.RuleSet:
    return nsmcore.load_rule_set(settings.NSM_RULE_SET)


def active_rule_set() -> nsmcore.RuleSet:
    """The active version, read from the database once per change (through the cache)."""
    document = cache.get(ACTIVE_KEY)
    if document is None:
        row = RuleSetVersion.objects.filter(status=RuleSetVersion.Status.ACTIVE).values("document").first()
        document = row["document"] if row else rule_set_document(packaged_rule_set())
        cache.set(ACTIVE_KEY, document, timeout=None)
    return rule_set_from_document(document)


def forget_active_rule_set() -> None:
    """Every process reads the active version afresh once the current transaction commits."""
    transaction.on_commit(lambda: cache.delete(ACTIVE_KEY))


def initial_version_fields(rule_set: nsmcore.RuleSet) -> dict[str, Any]:
    """The row that records the packaged default as the first version (migration and first use)."""
    suite = run_suite(rule_set).as_dict()
    return {
        "version": rule_set.version,
        "document": rule_set_document(rule_set),
        "content_hash": rule_set.content_hash,
        "note": f"the packaged default (NSM_RULE_SET={settings.NSM_RULE_SET})",
        "report": {"ok": suite["ok"], "suite": suite, "pilot": None},
    }


def ensure_initial_version() -> Any:
    """The active version's row; on a database with no version yet, the packaged default is
    recorded as the first (active, activated ``initial``). Only write paths call this."""
    active = RuleSetVersion.objects.filter(status=RuleSetVersion.Status.ACTIVE).first()
    if active is not None or RuleSetVersion.objects.exists():
        return active
    with transaction.atomic():
        row = RuleSetVersion.objects.create(
            status=RuleSetVersion.Status.ACTIVE, **initial_version_fields(packaged_rule_set())
        )
        RuleSetActivation.objects.create(version=row, how=RuleSetActivation.How.INITIAL)
    forget_active_rule_set()
    return row


def stored_version(reference: str) -> RuleSetVersion | None:
    """The stored version a report names: by its name, else by its hash or a prefix of it of at
    least 8 hex digits (reports, manifests and the database give the same hash for one rule set)."""
    found = RuleSetVersion.objects.filter(version=reference).first()
    if found is None and re.fullmatch(r"[0-9a-f]{8,64}", reference):
        matches = list(RuleSetVersion.objects.filter(content_hash__startswith=reference)[:2])
        found = matches[0] if len(matches) == 1 else None
    return found


def next_version_name() -> str:
    """One more than the largest whole-number version stored ("2" after "1")."""
    numbers = [int(v) for v in RuleSetVersion.objects.values_list("version", flat=True) if v.isdigit()]
    return str(max(numbers, default=0) + 1)


def proposed_rule_set(document: Any, version: str) -> nsmcore.RuleSet:
    """Read a proposed rule set (a JSON object in the v1.json format) under ``version``; a bad one
    raises RuleSetError naming the rule, slot and value."""
    if not isinstance(document, dict):
        raise RuleSetError(_("a rule set file is a JSON object with 'version' and 'rules'"))
    version = version.strip()
    if not re.fullmatch(VERSION_NAME, version):
        raise RuleSetError(
            _("version %(version)s: use up to 32 ASCII letters, digits, '.', '-' or '_' (e.g. 2 or 2.1)")
            % {"version": repr(version)}
        )
    return parse_rule_set({**document, "version": version}, source=f"rule set v{version}")


def rule_set_summary(rule_set: nsmcore.RuleSet) -> dict[str, Any]:
    """Region sizes over the full space and the regression suite report: computed once (a third
    of a second) and kept in the shared cache under the rule set's content hash, since they
    depend only on what the rules say."""
    return cache.get_or_set(
        f"nsm:rule-set-summary:{rule_set.content_hash}",
        lambda: {"regions": nsmcore.regions(rule_set), "suite": run_suite(rule_set)},
        timeout=None,
    )
