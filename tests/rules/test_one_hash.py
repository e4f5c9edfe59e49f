"""Issue 26: one hash for one rule set. Evaluation reports, export manifests and the regression
report gave v1's hash with its version name in it, the rule-set list, the database and the API
another (the rules alone), both called content_hash; a report's hash could not find its version."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import nsmcore
from adjudication.rule_revisions.services import revision_propose
from nsmcore.regression import run_suite
from rules.models import RuleSetVersion
from rules.rulesets import active_rule_set, stored_version
from tests.rules.data import moved

pytestmark = pytest.mark.django_db


def show(reference: str) -> dict:
    out = io.StringIO()
    call_command("rule_set", "show", reference, stdout=out)
    return json.loads(out.getvalue())


def test_every_report_gives_the_hash_the_database_stores():
    stored = RuleSetVersion.objects.get(status="active").content_hash
    rule_set = active_rule_set()
    pride = {s.name: s.default for s in nsmcore.SLOTS} | {
        "trigger": "someone-did-something", "agency": "i", "realization": "happened",
        "evaluation": "feel-good", "eval_target": "self",
    }  # fmt: skip
    items = [{"id": "a", "reference_label": "pride", "explication": pride}]
    report = nsmcore.evaluate(nsmcore.route_items(items, rule_set), tier="t", pass_name="p", orders=0)
    assert report.evidence.rule_set_hash == stored
    assert run_suite(rule_set).as_dict()["rule_set_hash"] == stored
    assert nsmcore.regions(rule_set)["rule_set_hash"] == stored


def test_a_reports_hash_finds_its_version(admin_user):
    v2 = revision_propose(user=admin_user, document=moved("no-emotion", 0), version="2")
    assert stored_version(v2.content_hash) == v2
    assert stored_version(v2.content_hash[:8]) == v2
    assert stored_version("2") == v2
    assert stored_version(v2.content_hash[:7]) is None  # too short to name one version
    assert show(v2.content_hash[:12])["rules"][0]["emotion"] == "no-emotion"
    with pytest.raises(CommandError, match="no rule set version 'abcdef0123'") as refused:
        show("abcdef0123")
    assert refused.value.returncode == 2
