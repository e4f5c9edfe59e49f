"""No page of the adjudication area links its reader to a page that refuses them: for each role,
every page of a populated round is opened and every internal link on it followed."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.urls import reverse

from adjudication.gold.services import (
    convention_apply,
    convention_propose,
    convention_revise,
    convention_vote,
)
from adjudication.models import Convention, GoldItem
from tests.crawl import crawl

# Pages of the area: everything under /adjudicate/ and the rule set page.
AREA = ("/adjudicate/", "/rules/")


@pytest.fixture
def populated(gold_round, adjudicator, other_adjudicator):
    """The gold round with an accepted, applied convention and a revision under vote."""
    convention = convention_propose(
        user=adjudicator, round_=gold_round, slot="body", value_a="no", value_b="yes", chosen="no",
        rule="A body word takes body=yes.",
    )  # fmt: skip
    for user in (adjudicator, other_adjudicator):
        convention = convention_vote(user=user, convention=convention, approve=True)
    convention_apply(user=adjudicator, convention=convention)
    convention_revise(user=adjudicator, convention=convention, chosen="yes", rule="Revised.")
    return gold_round


def area_pages(round_) -> list[str]:
    items = list(GoldItem.objects.filter(round=round_).values_list("item_id", flat=True))
    pages = [reverse("adjudicate"), reverse("conventions"), reverse("rule_set")]
    pages += [
        reverse(name, args=[round_.pk])
        for name in ("agreement", "conflicts", "flows", "anchoring", "gold_list", "judgements", "calibration")
    ]
    pages += [reverse("conflict_item", args=[round_.pk, i]) for i in items]
    pages += [reverse("gold_item", args=[round_.pk, i]) for i in items]
    pages += [reverse("convention", args=[c]) for c in Convention.objects.values_list("pk", flat=True)]
    return pages


@pytest.mark.parametrize("persona", ["annotator", "adjudicator", "admin_user"])
def test_no_page_of_the_area_links_its_reader_to_a_refused_page(client, request, persona, populated):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    seeds = [reverse("home"), *area_pages(populated)]
    status, refused = crawl(client, seeds, area=AREA)
    first = {link: page for page, link, _ in reversed(refused)}  # one example page per refused link
    assert not refused, "\n".join(f"{page} (and others) links to {link}: 403" for link, page in first.items())
    opened = [url for url in status if status[url] == 200 and urlsplit(url).path.startswith(AREA)]
    if persona == "annotator":
        # an annotator reads the rule set, and nothing else of the area
        assert {urlsplit(u).path for u in opened} == {reverse("rule_set")}
    else:
        assert len(opened) > 20  # the crawl did reach the area's pages
        assert reverse("gold_list", args=[populated.pk]) in opened


def test_adjudicators_are_told_who_runs_verification_and_admins_are_not_sent_to_judge(
    client, adjudicator, admin_user, populated
):
    client.force_login(adjudicator)
    page = client.get(reverse("calibration", args=[populated.pk])).content.decode()
    assert "an admin runs a verification job" in page and 'href="/jobs/"' not in page
    assert f'href="{reverse("judgements", args=[populated.pk])}"' in page
    client.force_login(admin_user)
    for name in ("calibration", "gold_list", "agreement"):
        page = client.get(reverse(name, args=[populated.pk])).content.decode()
        assert f'href="{reverse("judgements", args=[populated.pk])}"' not in page, name
    page = client.get(reverse("calibration", args=[populated.pk])).content.decode()
    assert 'href="/jobs/"' in page and "entailment judgements" in page
