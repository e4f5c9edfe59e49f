"""The API's list endpoints filter and page in the database; a bad filter value is a 400 naming
the parameter."""

import pytest
from django.urls import reverse

from annotator.models import Assignment, Item
from annotator.services import annotation_submit
from tests.factories import PRED, make_items

pytestmark = pytest.mark.django_db


def test_items_filter_by_label_source_and_item_set(client, adjudicator, prefilled_round):
    make_items(n_copies=2)  # t*-0 already exist: this adds t*-1, outside the round's set
    client.force_login(adjudicator)
    url = reverse("api_items")
    label = Item.objects.order_by("id").first().reference_label
    expected = list(
        Item.objects.filter(reference_label=label).order_by("id").values_list("source_id", flat=True)
    )
    got = client.get(url, {"reference_label": label}).json()
    assert got["count"] == len(expected) == 2
    assert [r["source_id"] for r in got["results"]] == expected
    in_set = client.get(url, {"item_set": prefilled_round.item_set_id}).json()
    assert sorted(r["source_id"] for r in in_set["results"]) == [f"t{k}-0" for k in range(1, 5)]
    assert client.get(url, {"source": "elsewhere"}).json()["count"] == 0
    # paged by the database, 50 a page: the 8 items fit on the first, there is no second
    assert client.get(url, {"reference_label": label}).json()["next"] is None
    assert client.get(url, {"page": 2}).status_code == 404


def test_a_bad_item_filter_is_a_400_naming_it(client, adjudicator, prefilled_round):
    client.force_login(adjudicator)
    response = client.get(reverse("api_items"), {"item_set": "first"})
    assert response.status_code == 400 and list(response.json()) == ["item_set"]


def test_my_assignments_filter_by_round_and_status(client, annotator, prefilled_round):
    first = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position").first()
    annotation_submit(assignment=first, user=annotator, values=PRED, base_version=0)
    client.force_login(annotator)
    url = reverse("api_assignments")
    done = client.get(url, {"round": "prefilled", "status": "done"}).json()
    assert [r["id"] for r in done["results"]] == [first.pk]
    pending = client.get(url, {"status": "pending"}).json()
    assert pending["count"] == 3 and first.pk not in [r["id"] for r in pending["results"]]
    # a round's id works as its name does; a round that does not exist is a 400 naming it, not an
    # empty list that reads as "nothing to do" (found by two walkthroughs)
    by_id = client.get(url, {"round": str(prefilled_round.pk), "status": "done"}).json()
    assert [r["id"] for r in by_id["results"]] == [first.pk]
    unknown = client.get(url, {"round": "no-such-round"})
    assert unknown.status_code == 400 and "no-such-round" in unknown.json()["round"][0]


def test_a_bad_assignment_status_is_a_400_naming_it(client, annotator, prefilled_round):
    client.force_login(annotator)
    response = client.get(reverse("api_assignments"), {"status": "finished"})
    assert response.status_code == 400
    assert "status" in response.json() and "finished" in response.json()["status"][0]
