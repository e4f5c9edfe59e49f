"""A rule revision's report lists the minimal pairs whose intended rewrite it routes elsewhere
(rules.revision_checks, registered by ContrastsConfig.ready)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from adjudication.rule_revisions.services import revision_propose
from annotator.models import Item
from contrasts.services import pair_add, pair_set_freeze, pair_set_new_version
from rules import revision_checks
from rules.rulesets import packaged_rule_set, proposed_rule_set
from tests.rules.data import moved

pytestmark = pytest.mark.django_db


@pytest.fixture
def joy_first():
    """v1 with joy's rule first: the gold explication PRED (pride under v1) routes to joy."""
    return proposed_rule_set(moved("joy", 0), "2")


def section(old, new) -> dict:
    sections = {s["name"]: s for s in revision_checks.run(old, new)}
    return sections["contrasts"]


def test_the_app_registers_its_check():
    assert "contrasts" in revision_checks.registered()


def test_the_pairs_whose_label_the_revision_changes_are_listed(pair_set, joy_first):
    found = section(packaged_rule_set(), joy_first)
    assert found["error"] == "" and found["title"] == "Minimal pairs whose label the revision changes"
    assert (found["pairs"], found["skipped"], found["changed"], found["sets"]) == (
        3,
        0,
        2,
        ["pilot-pairs@v1"],
    )
    rows = {r["family"]: r for r in found["rows"]}
    # the agency flip routes to joy under both; the invariance pair and the intensity flip move
    assert set(rows) == {"invariance", "F-intensity"}
    invariant, intensity = rows["invariance"], rows["F-intensity"]
    assert (invariant["old"], invariant["new"], invariant["expected"]) == ("pride", "joy", "joy")
    assert invariant["still_expected"] and not invariant["was_expected"]
    assert (intensity["old"], intensity["new"], intensity["expected"]) == ("pride", "joy", "pride")
    assert not intensity["still_expected"] and intensity["was_expected"]
    assert found["no_longer_expected"] == 1 and found["now_expected"] == 1
    assert intensity["source_id"] == "t3-0" and intensity["explication_from"] == "gold"
    assert intensity["url"] == f"/contrasts/{pair_set.pk}/#pair-{intensity['pair']}"
    assert [key for key, _heading in found["columns"]][:2] == ["set", "source_id"]
    json.dumps(found)  # the report is stored as JSON


def test_the_same_rules_change_nothing(pair_set):
    found = section(packaged_rule_set(), packaged_rule_set())
    assert (found["changed"], found["rows"]) == (0, [])


def test_only_the_newest_version_of_a_set_is_read(pair_set, joy_first, adjudicator):
    pair_set_freeze(user=adjudicator, pair_set=pair_set)
    pair_set_new_version(user=adjudicator, pair_set=pair_set)
    found = section(packaged_rule_set(), joy_first)
    assert found["sets"] == ["pilot-pairs@v2"] and found["changed"] == 2


def test_an_item_without_gold_is_read_from_the_stated_values(pair_set, joy_first):
    item = Item.objects.create(
        source="mine", source_id="m-1", text="I won the race.", reference_label="pride"
    )
    pair_add(
        user=None, pair_set=pair_set, item=item.pk, text="My brother won the race.", expected="joy",
        targets={"agency": "someone-else"}, from_values={"agency": "i"},
    )  # fmt: skip
    pair_add(user=None, pair_set=pair_set, item=item.pk, text="I won the running race.", invariance=True)
    found = section(packaged_rule_set(), joy_first)
    assert (found["pairs"], found["skipped"]) == (4, 1)  # the invariance pair without gold states no slot
    # the schema's defaults with agency flipped route nowhere under either version: not listed
    assert {r["source_id"] for r in found["rows"]} == {"t3-0"}


def test_a_check_that_fails_is_reported_in_its_section(monkeypatch):
    def broken(old, new):
        raise RuntimeError("no database today")

    monkeypatch.setitem(revision_checks._CHECKS, "broken", broken)
    sections = {s["name"]: s for s in revision_checks.run(packaged_rule_set(), packaged_rule_set())}
    assert sections["broken"] == {
        "name": "broken", "title": "broken", "rows": [], "columns": [],
        "error": "RuntimeError: no database today",
    }  # fmt: skip
    assert sections["contrasts"]["error"] == ""


def test_a_proposal_stores_the_pairs_it_changes_and_its_page_lists_them(client, pair_set, adjudicator):
    version = revision_propose(user=adjudicator, document=moved("joy", 0), note="joy first")
    [stored] = [c for c in version.report["checks"] if c["name"] == "contrasts"]
    assert stored["changed"] == 2 and stored["no_longer_expected"] >= 1
    client.force_login(adjudicator)
    page = client.get(reverse("rule_revision", args=[version.version])).content.decode()
    assert 'id="check-contrasts-rows"' in page
    assert "Minimal pairs whose label the revision changes" in page
    assert "I was over the moon when it snowed on my birthday." in page  # the intensity flip
    german = client.get(reverse("rule_revision", args=[version.version]), HTTP_ACCEPT_LANGUAGE="de")
    assert "Minimalpaare, deren Label die Revision ändert" in german.content.decode()
