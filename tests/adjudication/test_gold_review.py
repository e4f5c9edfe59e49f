"""Gold records marked for review, and unmarked: an annotation revised after the item's gold
record exists marks it (open or resolved) until an adjudicator resolves it again; a proposed
revision of a convention marks what the convention resolved, and withdrawing or rejecting that
revision takes back its own marks and no others. Through the services, the pages and the API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from adjudication.gold.services import (
    convention_apply,
    convention_revise,
    convention_vote,
    convention_withdraw,
    gold_resolve,
    gold_sync,
)
from adjudication.models import Convention, GoldItem
from annotator.models import Annotation, Assignment
from annotator.services import annotation_submit
from tests.adjudication.api_checks import conforms
from tests.explications import PRED


def golds(round_) -> dict[str, GoldItem]:
    return {g.item.source_id: g for g in GoldItem.objects.filter(round=round_).select_related("item")}


def flagged(round_) -> dict[str, str]:
    return {source: g.review_reason for source, g in golds(round_).items() if g.needs_review}


def assignment_of(round_, user, source_id: str) -> Assignment:
    return Assignment.objects.get(round=round_, annotator=user, item__source_id=source_id)


def revise(round_, user, source_id: str, **changes: str) -> Annotation:
    """The annotator saves their annotation of the item again, as the workspace does."""
    a = assignment_of(round_, user, source_id)
    annotation = Annotation.objects.get(assignment=a)
    values = {**annotation.slots(), **changes}
    return annotation_submit(assignment=a, user=user, values=values, base_version=annotation.version)


# An annotation revised after the gold record exists ---------------------------------------------


def test_a_revision_after_the_gold_is_resolved_marks_it_for_review(
    gold_round, adjudicator, annotator, other_annotator
):
    assert flagged(gold_round) == {}
    revise(gold_round, other_annotator, "t4-0", body="yes")
    assert gold_sync(gold_round) == 0  # nothing opened
    assert flagged(gold_round) == {"t4-0": "bob revised their annotation to v2"}
    t4 = golds(gold_round)["t4-0"]
    assert t4.status == "resolved"  # the record stays as it was: a person decides what changes

    # revised again before anyone looked: the reason names the newest version, once
    revise(gold_round, other_annotator, "t4-0", body="no")
    gold_sync(gold_round)
    assert flagged(gold_round) == {"t4-0": "bob revised their annotation to v3"}

    gold_resolve(user=adjudicator, gold=t4, values={}, why="bob came back to the unanimous reading")
    assert flagged(gold_round) == {}
    # a later change elsewhere marks that item only: t4-0 was reviewed as its annotations stand
    revise(gold_round, annotator, "t1-0", agency="someone-else")
    gold_sync(gold_round)
    assert flagged(gold_round) == {"t1-0": "alice revised their annotation to v2"}


def test_a_revision_marks_an_open_record_and_names_every_annotator_who_changed(
    submitted, annotator, other_annotator
):
    gold_sync(submitted)
    revise(submitted, other_annotator, "t1-0", agency="i")
    revise(submitted, annotator, "t1-0", body="yes")
    assert gold_sync(submitted) == 0
    assert flagged(submitted) == {
        "t1-0": "alice revised their annotation to v2; bob revised their annotation to v2"
    }
    assert golds(submitted)["t1-0"].status == "open"


def test_new_records_and_unchanged_annotations_are_not_marked(
    all_but_bobs_last, prefilled_round, other_annotator
):
    assert gold_sync(prefilled_round) == 3
    last = assignment_of(prefilled_round, other_annotator, "t4-0")
    annotation_submit(assignment=last, user=other_annotator, values=dict(PRED), base_version=0)
    assert gold_sync(prefilled_round) == 1
    assert flagged(prefilled_round) == {}


def test_the_annotators_revision_through_the_api_shows_in_the_gold_api_once_opened(
    openapi, api, client, gold_round, adjudicator, other_annotator
):
    a = assignment_of(gold_round, other_annotator, "t4-0")
    client.force_login(other_annotator)
    body = {**Annotation.objects.get(assignment=a).slots(), "body": "yes", "base_version": 1}
    response = client.post(
        reverse("api_annotation_submit", args=[a.pk]), body, content_type="application/json"
    )
    assert response.status_code == 200 and Annotation.objects.get(assignment=a).version == 2

    api.force_login(adjudicator)
    # as the gold list page says it: how many records were built from annotations revised since
    before = conforms(openapi, api.get(reverse("api_gold", args=[gold_round.pk])))
    assert before["revised"] == 1 and flagged(gold_round) == {}  # a GET marks nothing
    opened = api.post(reverse("api_gold_open", args=[gold_round.pk]))
    assert opened.status_code == 200
    assert (conforms(openapi, opened)["opened"], opened.json()["marked"]) == (0, 1)
    assert conforms(openapi, api.get(reverse("api_gold", args=[gold_round.pk])))["revised"] == 0
    listed = conforms(openapi, api.get(reverse("api_gold", args=[gold_round.pk]), {"status": "review"}))
    assert [(r["source_id"], r["needs_review"], r["review_reason"]) for r in listed["results"]] == [
        ("t4-0", True, "bob revised their annotation to v2")
    ]
    assert flagged(gold_round) == {"t4-0": "bob revised their annotation to v2"}


def test_the_revision_shows_on_the_gold_list_page_until_resolved_again(
    client, gold_round, adjudicator, other_annotator
):
    revise(gold_round, other_annotator, "t4-0", body="yes")
    client.force_login(adjudicator)
    response = client.post(reverse("gold_open", args=[gold_round.pk]), {})
    assert response.status_code == 302
    page = client.get(reverse("gold_list", args=[gold_round.pk]), {"status": "review"}).content.decode()
    assert page.count("to review</span>") == 1 and 'title="bob revised their annotation to v2"' in page

    t4 = golds(gold_round)["t4-0"]
    response = client.post(
        reverse("gold_item", args=[gold_round.pk, t4.item_id]), {"why": "checked bob's change"}
    )
    assert response.status_code == 302, response.content.decode()[:500]
    assert flagged(gold_round) == {}
    page = client.get(reverse("gold_list", args=[gold_round.pk]), {"status": "review"}).content.decode()
    assert "to review</span>" not in page


def test_the_gold_list_offers_to_mark_revised_records_and_a_get_marks_nothing(
    client, gold_round, adjudicator, admin_user, other_annotator
):
    url = reverse("gold_list", args=[gold_round.pk])
    client.force_login(adjudicator)
    assert 'id="gold-review-button"' not in client.get(url).content.decode()
    revise(gold_round, other_annotator, "t4-0", body="yes")
    page = client.get(url).content.decode()
    assert "<strong>1 gold record</strong> was built from annotations revised since" in page
    assert 'id="gold-review-button"' in page and 'id="gold-open-button"' not in page
    assert flagged(gold_round) == {}  # the page only counts them

    client.force_login(admin_user)  # admins read the notice and press the button too, as for opening
    assert 'id="gold-review-button"' in client.get(url).content.decode()
    client.force_login(adjudicator)
    response = client.post(reverse("gold_open", args=[gold_round.pk]), {"next": url}, follow=True)
    page = response.content.decode()
    assert "0 gold records opened; 1 marked for review (its annotations were revised)." in page
    assert 'id="gold-review-button"' not in page
    assert flagged(gold_round) == {"t4-0": "bob revised their annotation to v2"}


def test_records_opened_before_the_marker_was_kept_get_the_versions_they_were_opened_with(
    gold_round, other_annotator
):
    """The migration that adds the marker fills it from the annotation revisions: a revision
    saved after the record was opened is then marked by the next gold_sync, no other."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("adjudication.migrations.0004_gold_remembers_annotation_versions")
    revise(gold_round, other_annotator, "t4-0", body="yes")
    GoldItem.objects.update(annotations_seen={})
    migration._annotations_at_opening(apps, None)
    markers = {source: g.annotations_seen for source, g in golds(gold_round).items()}
    bob = str(other_annotator.pk)
    assert markers["t4-0"][bob] == 1 and all(len(m) == 2 for m in markers.values())
    gold_sync(gold_round)
    assert flagged(gold_round) == {"t4-0": "bob revised their annotation to v2"}


# A proposed revision of a convention withdrawn or rejected -----------------------------------------


def test_withdrawing_a_revision_unmarks_what_it_marked(submitted, accepted, adjudicator, other_adjudicator):
    gold_sync(submitted)
    convention_apply(user=adjudicator, convention=accepted)
    revision = convention_revise(
        user=other_adjudicator, convention=accepted, chosen="someone-else", rule="the other's act wins"
    )
    assert flagged(submitted) == {"t1-0": "C1 revised to v2", "t2-0": "C1 revised to v2"}
    convention_withdraw(user=other_adjudicator, convention=revision)
    assert flagged(submitted) == {}


@pytest.fixture
def revised(submitted, accepted, adjudicator, other_adjudicator, other_annotator):
    """C1 v1 applied (t1-0 and t2-0), bob's annotation of t2-0 revised since, then C1 v2 proposed
    by dave: t1-0 marked for the convention, t2-0 for both."""
    gold_sync(submitted)
    convention_apply(user=adjudicator, convention=accepted)
    revise(submitted, other_annotator, "t2-0", body="yes")
    gold_sync(submitted)
    revision = convention_revise(
        user=other_adjudicator, convention=accepted, chosen="someone-else", rule="the other's act wins"
    )
    assert flagged(submitted) == {
        "t1-0": "C1 revised to v2",
        "t2-0": "bob revised their annotation to v2; C1 revised to v2",
    }
    return revision


def test_withdrawing_a_revision_takes_back_its_marks_and_no_others(
    submitted, accepted, other_adjudicator, revised
):
    convention_withdraw(user=other_adjudicator, convention=revised)
    assert flagged(submitted) == {"t2-0": "bob revised their annotation to v2"}
    accepted.refresh_from_db()
    assert accepted.status == "accepted"


def test_a_revision_rejected_by_the_vote_takes_back_its_marks(
    submitted, accepted, adjudicator, other_adjudicator, revised
):
    for user in (adjudicator, other_adjudicator):
        revised = convention_vote(user=user, convention=revised, approve=False)
    assert revised.status == "rejected"
    assert flagged(submitted) == {"t2-0": "bob revised their annotation to v2"}
    accepted.refresh_from_db()
    assert accepted.status == "accepted"


def test_an_accepted_revision_keeps_its_marks(submitted, adjudicator, other_adjudicator, revised):
    for user in (adjudicator, other_adjudicator):
        revised = convention_vote(user=user, convention=revised, approve=True)
    assert revised.status == "accepted"
    assert set(flagged(submitted)) == {"t1-0", "t2-0"}


def test_withdrawing_a_revision_through_the_page(client, submitted, other_adjudicator, revised):
    client.force_login(other_adjudicator)
    response = client.post(reverse("convention_withdraw", args=[revised.pk]))
    assert response.status_code == 302
    assert Convention.objects.get(pk=revised.pk).status == "withdrawn"
    page = client.get(reverse("gold_list", args=[submitted.pk]), {"status": "review"}).content.decode()
    assert page.count("to review</span>") == 1 and "C1 revised to v2" not in page
    assert flagged(submitted) == {"t2-0": "bob revised their annotation to v2"}


def test_withdrawing_a_revision_through_the_api(openapi, api, submitted, other_adjudicator, revised):
    api.force_login(other_adjudicator)
    response = api.post(reverse("api_convention_withdraw", args=[revised.pk]))
    assert response.status_code == 200 and conforms(openapi, response)["status"] == "withdrawn"
    listed = conforms(openapi, api.get(reverse("api_gold", args=[submitted.pk]), {"status": "review"}))
    assert [(r["source_id"], r["review_reason"]) for r in listed["results"]] == [
        ("t2-0", "bob revised their annotation to v2")
    ]
