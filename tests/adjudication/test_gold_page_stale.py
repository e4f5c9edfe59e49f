"""Two adjudicators resolving the same gold record on its page (found by a browser walkthrough: the
second save silently replaced the first). The page carries the version it was read at; a save
over a newer one is a 409 showing the record as it is now, and writes nothing."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from adjudication.gold.services import gold_sync
from adjudication.models import GoldChange, GoldItem

pytestmark = pytest.mark.django_db


def page_version(client, url) -> str:
    page = client.get(url).content.decode()
    found = re.search(r'name="base_version" value="(\d+)"', page)
    assert found, "the resolve form carries no base_version"
    return found.group(1)


def test_the_second_of_two_adjudicators_on_one_record_is_refused_not_silently_applied(
    submitted, adjudicator, other_adjudicator
):
    gold_sync(submitted)
    gold = GoldItem.objects.get(round=submitted, item__source_id="t1-0")
    url = reverse("gold_item", args=[submitted.pk, gold.item_id])
    first, second = Client(), Client()
    first.force_login(adjudicator)
    second.force_login(other_adjudicator)
    seen_first, seen_second = page_version(first, url), page_version(second, url)

    saved = first.post(url, {"agency": "i", "why": "the writer acts", "base_version": seen_first})
    assert saved.status_code == 302
    refused = second.post(url, {"agency": "someone-else", "why": "another acts", "base_version": seen_second})
    assert refused.status_code == 409
    assert "changed since" in refused.content.decode()
    gold.refresh_from_db()
    assert gold.construals.get(index=1).slots["agency"] == "i"  # the first decision stands
    assert not GoldChange.objects.filter(gold=gold, who=other_adjudicator).exists()  # nothing of the second

    # read again, the second adjudicator may decide on what it is now
    again = second.post(
        url, {"agency": "someone-else", "why": "another acts", "base_version": page_version(second, url)}
    )
    assert again.status_code == 302
    gold.refresh_from_db()
    assert gold.construals.get(index=1).slots["agency"] == "someone-else"
