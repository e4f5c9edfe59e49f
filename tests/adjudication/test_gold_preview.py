"""The gold item page shows each construal's rendered lines and routed label, live as slots change
(an htmx fragment), and warns when two construals route to the same label."""

import re

import pytest
from django.urls import reverse

from adjudication.gold.services import gold_sync
from adjudication.models import GoldChange, GoldConstrual, GoldItem


def preview_of(page: str) -> str:
    return re.search(r'<section id="gold-preview"[^>]*>(.*?)</section>', page, re.S).group(1)


@pytest.fixture
def open_item(submitted):
    """t1-0: agency unresolved (alice said i, bob someone-else); the rest is the pride example."""
    gold_sync(submitted)
    return GoldItem.objects.get(round=submitted, item__source_id="t1-0")


def test_the_page_shows_the_lines_and_what_is_missing_before_any_choice(client, adjudicator, open_item):
    client.force_login(adjudicator)
    page = client.get(reverse("gold_item", args=[open_item.round_id, open_item.item_id])).content.decode()
    preview = preview_of(page)
    assert "not routed yet: unresolved agency" in preview
    assert (
        '<li data-slot="evaluation"><span class="slotname">evaluation</span> I feel something good' in preview
    )
    assert 'data-slot="agency"' not in preview  # an unresolved slot renders no line
    assert f'hx-post="{reverse("gold_preview", args=[open_item.round_id, open_item.item_id])}"' in page


def test_choosing_a_slot_routes_the_construal_live_without_saving(client, adjudicator, open_item):
    client.force_login(adjudicator)
    url = reverse("gold_preview", args=[open_item.round_id, open_item.item_id])
    response = client.post(url, {"agency": "i"}, HTTP_HX_REQUEST="true")
    fragment = response.content.decode()
    assert response.status_code == 200 and "<html" not in fragment
    assert 'data-label="pride"' in fragment and '<span class="tag">rule 7</span>' in fragment
    assert '<li data-slot="agency"><span class="slotname">agency</span> I did something' in fragment
    other = client.post(url, {"agency": "someone-else"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'data-label="joy"' in other and "someone else did something" in other.lower()
    # a preview writes nothing
    construal = GoldConstrual.objects.get(gold=open_item, index=1)
    assert construal.slots["agency"] is None and construal.label == ""
    assert GoldChange.objects.filter(gold=open_item).count() == 1
    open_item.refresh_from_db()
    assert open_item.status == "open"


def test_two_construals_routing_to_one_label_are_warned_about(client, adjudicator, open_item):
    client.force_login(adjudicator)
    url = reverse("gold_preview", args=[open_item.round_id, open_item.item_id])
    same = client.post(
        url, {"agency": "i", "two_construals": "1", "second_intensity": "very"}
    ).content.decode()
    assert same.count('data-label="pride"') == 2
    assert "Both construals route to pride: the pivotal slot (intensity) changes nothing." in same
    apart = client.post(url, {"agency": "i", "two_construals": "1", "second_agency": "someone-else"})
    fragment = apart.content.decode()
    assert 'data-label="pride"' in fragment and 'data-label="joy"' in fragment
    assert "pivotal: agency" in fragment and 'id="same-label"' not in fragment
    alike = client.post(url, {"agency": "i", "two_construals": "1"}).content.decode()
    assert 'id="no-pivotal"' in alike


def test_the_saved_page_warns_too(client, admin_user, gold_round):
    # t3-0 was kept with two construals (intensity plain / very): both route to pride
    client.force_login(admin_user)
    gold = GoldItem.objects.get(round=gold_round, item__source_id="t3-0")
    page = client.get(reverse("gold_item", args=[gold_round.pk, gold.item_id])).content.decode()
    assert "Both construals route to pride" in preview_of(page)
    assert "hx-post" not in page  # admins read; the form (and its live preview) is the adjudicators'


def test_a_bad_value_is_a_400_naming_it_and_admins_may_not_preview(
    client, adjudicator, admin_user, open_item
):
    client.force_login(adjudicator)
    url = reverse("gold_preview", args=[open_item.round_id, open_item.item_id])
    response = client.post(url, {"agency": "feel-good"})
    assert response.status_code == 400
    assert (
        "agency: 'feel-good' is not an allowed value; allowed: i, someone-else, no-one, none"
        in response.content.decode()
    )
    assert client.get(url).status_code == 405
    client.force_login(admin_user)
    assert client.post(url, {"agency": "i"}).status_code == 403
