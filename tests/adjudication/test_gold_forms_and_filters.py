"""The gold pages read their POSTs through forms (a bad value is a 400 naming it, and nothing is
written), filter and page in the database, and open gold records only at a press of a button."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from adjudication.gold import views as gold_views
from adjudication.gold.selectors import gold_awaiting
from adjudication.gold.services import gold_sync
from adjudication.models import Convention, GoldChange, GoldItem
from verification.models import EntailmentJudgement


def rows(page: str) -> list[str]:
    return re.findall(r'<tr data-item="([^"]+)"', page)


def test_reading_the_gold_list_opens_nothing_and_the_button_opens_them(client, adjudicator, submitted):
    client.force_login(adjudicator)
    url = reverse("gold_list", args=[submitted.pk])
    page = client.get(url).content.decode()
    assert GoldItem.objects.count() == 0 and gold_awaiting(submitted) == 4
    assert "4 items</strong> have all their annotations in and no gold record yet" in page
    response = client.post(reverse("gold_open", args=[submitted.pk]), {"next": url + "?status=open"})
    assert response.status_code == 302 and response["Location"] == url + "?status=open"
    assert GoldItem.objects.filter(round=submitted).count() == 4 and gold_awaiting(submitted) == 0
    page = client.get(url).content.decode()
    assert 'id="gold-open"' not in page and rows(page) == ["t1-0", "t2-0", "t3-0", "t4-0"]
    # another site's address is not followed
    away = client.post(reverse("gold_open", args=[submitted.pk]), {"next": "https://example.org/"})
    assert away["Location"] == url


def test_opening_gold_records_is_a_post_for_adjudicators_and_admins(client, annotator, submitted):
    client.force_login(annotator)
    assert client.post(reverse("gold_open", args=[submitted.pk])).status_code == 403
    assert client.get(reverse("gold_open", args=[submitted.pk])).status_code in (403, 405)
    assert not GoldItem.objects.exists()


@pytest.mark.parametrize(
    "query, expected",
    [
        ({}, ["t1-0", "t2-0", "t3-0", "t4-0"]),
        ({"status": "resolved"}, ["t1-0", "t4-0"]),
        ({"status": "open"}, ["t2-0", "t3-0"]),
        ({"source": "adjudicated"}, ["t1-0"]),
        ({"source": "unanimous"}, ["t1-0", "t2-0", "t3-0", "t4-0"]),
        ({"source": "convention"}, []),
        ({"status": "review"}, []),
    ],
)
def test_the_gold_list_filters_in_the_database(client, adjudicator, submitted, query, expected):
    gold_sync(submitted)
    t1 = GoldItem.objects.get(item__source_id="t1-0")
    from adjudication.gold.services import gold_resolve

    gold_resolve(user=adjudicator, gold=t1, values={"agency": "i"}, why="the writer acts")
    client.force_login(adjudicator)
    response = client.get(reverse("gold_list", args=[submitted.pk]), query)
    assert response.status_code == 200
    assert rows(response.content.decode()) == expected


def test_the_gold_list_pages_in_the_database(client, adjudicator, submitted, monkeypatch):
    gold_sync(submitted)
    monkeypatch.setattr(gold_views, "PAGE_SIZE", 3)
    client.force_login(adjudicator)
    url = reverse("gold_list", args=[submitted.pk])
    first = client.get(url).content.decode()
    second = client.get(url, {"page": 2}).content.decode()
    assert rows(first) == ["t1-0", "t2-0", "t3-0"] and rows(second) == ["t4-0"]
    assert "page 2 of 2" in second


@pytest.mark.parametrize("query, field", [({"status": "lost"}, "status"), ({"source": "oracle"}, "source")])
def test_a_bad_gold_filter_is_a_400_naming_the_field(client, adjudicator, submitted, query, field):
    gold_sync(submitted)
    client.force_login(adjudicator)
    response = client.get(reverse("gold_list", args=[submitted.pk]), query)
    page = response.content.decode()
    assert response.status_code == 400
    error = re.search(r'<p class="error" id="filter-error">(.*?)</p>', page, re.S).group(1)
    assert error.startswith(f"{field}: Select a valid choice") and rows(page) == []


@pytest.mark.parametrize(
    "post, message",
    [
        ({"agency": "feel-good", "why": "x"}, "agency: &#x27;feel-good&#x27; is not an allowed value"),
        (
            {"intensity": "plain", "two_construals": "1", "second_intensity": "loud", "why": "x"},
            "second_intensity:",
        ),
    ],
)
def test_a_bad_resolve_post_is_a_400_naming_the_field_and_writes_nothing(
    client, adjudicator, submitted, post, message
):
    gold_sync(submitted)
    gold = GoldItem.objects.get(item__source_id="t3-0")
    changes = GoldChange.objects.count()
    client.force_login(adjudicator)
    response = client.post(reverse("gold_item", args=[submitted.pk, gold.item_id]), post)
    assert response.status_code == 400 and message in response.content.decode()
    gold.refresh_from_db()
    assert gold.status == "open" and GoldChange.objects.count() == changes
    assert gold.construals.count() == 1


@pytest.mark.parametrize(
    "post, message",
    [
        ({"chosen": "no-one", "rule": "Revised."}, "chosen: no-one is not one of the disputed values"),
        ({"chosen": "someone-else", "rule": ""}, "rule: write the revised convention in words"),
    ],
)
def test_a_bad_revision_is_a_400_naming_the_field_and_writes_nothing(
    client, adjudicator, accepted, post, message
):
    client.force_login(adjudicator)
    response = client.post(reverse("convention_revise", args=[accepted.pk]), post)
    page = response.content.decode()
    assert response.status_code == 400 and message in page and 'id="revise-error"' in page
    assert Convention.objects.count() == 1


@pytest.mark.parametrize(
    "post, message",
    [
        ({"entailed": "maybe"}, "entailed: say entailed=yes or entailed=no"),
        ({"entailed": "yes", "page": "two"}, "page: Enter a whole number."),
        ({"entailed": "yes", "line": ""}, "line: This field is required."),
    ],
)
def test_a_bad_judgement_post_is_a_400_naming_the_field(client, gold_round, adjudicator, post, message):
    from verification.calibration import gold_lines

    item_id, lines = next(iter(gold_lines(gold_round).items()))
    client.force_login(adjudicator)
    data = {"line": lines[0].text, **post}
    response = client.post(reverse("judgement_mark", args=[gold_round.pk, item_id]), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert not EntailmentJudgement.objects.exists()


def test_before_records_are_opened_the_list_points_to_the_button_not_to_waiting(
    client, submitted, adjudicator
):
    """Found by a browser walkthrough: the page said both "4 items have all their annotations in"
    and "No gold records yet: items enter when all their annotations are in"."""
    client.force_login(adjudicator)
    page = client.get(reverse("gold_list", args=[submitted.pk])).content.decode()
    assert 'id="gold-open-button"' in page
    assert "No gold records yet: open them above." in page and "items enter when" not in page
