"""Moving around a round: previous / next item on the annotation page, and the list of one's items."""

import re

import pytest
from django.urls import reverse

from annotator.models import Assignment
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, assignment_skip, round_create
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def mine(round_, user) -> list[Assignment]:
    return list(Assignment.objects.filter(round=round_, annotator=user).order_by("position"))


@pytest.fixture
def worked(prefilled_round, annotator):
    """Alice's four items: the first done, the second skipped, the last two to do."""
    a = mine(prefilled_round, annotator)
    annotation_submit(assignment=a[0], user=annotator, values=PRED, base_version=0)
    assignment_skip(assignment=a[1], user=annotator)
    return a


def link(body: str, element_id: str) -> str | None:
    found = re.search(rf'<a [^>]*id="{element_id}"[^>]*href="([^"]+)"', body)
    return found.group(1) if found else None


def test_previous_and_next_follow_the_queue_position_whatever_the_status(client, annotator, worked):
    client.force_login(annotator)
    body = client.get(reverse("annotate", args=[worked[1].pk])).content.decode()  # the skipped one
    assert link(body, "prev-item") == reverse("annotate", args=[worked[0].pk])  # done: still reachable
    assert link(body, "next-item") == reverse("annotate", args=[worked[2].pk])
    assert "2 of 4" in body
    first = client.get(reverse("annotate", args=[worked[0].pk])).content.decode()
    assert link(first, "prev-item") is None and link(first, "next-item") == reverse(
        "annotate", args=[worked[1].pk]
    )
    last = client.get(reverse("annotate", args=[worked[3].pk])).content.decode()
    assert link(last, "next-item") is None and link(last, "prev-item") == reverse(
        "annotate", args=[worked[2].pk]
    )


def test_previous_and_next_never_lead_to_another_annotators_items(
    client, prefilled_round, annotator, other_annotator, worked
):
    client.force_login(annotator)
    theirs = {a.pk for a in mine(prefilled_round, other_annotator)}
    linked = set()
    for a in worked:
        body = client.get(reverse("annotate", args=[a.pk])).content.decode()
        linked |= {link(body, element_id) for element_id in ("prev-item", "next-item")} - {None}
    assert linked == {reverse("annotate", args=[a.pk]) for a in worked}  # mine, each one reachable
    assert not linked & {reverse("annotate", args=[pk]) for pk in theirs}


def test_my_items_lists_every_item_of_mine_with_status_position_and_snippet(client, annotator, worked):
    client.force_login(annotator)
    url = reverse("round_items", args=[worked[0].round_id])
    response = client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    rows = re.findall(r'<tr data-status="(\w+)" data-position="(\d+)">(.*?)</tr>', body, re.S)
    assert [(s, p) for s, p, _ in rows] == [
        ("done", "1"),
        ("skipped", "2"),
        ("pending", "3"),
        ("pending", "4"),
    ]
    for a, (_, _, row) in zip(worked, rows, strict=True):
        assert f'href="{reverse("annotate", args=[a.pk])}"' in row
        assert a.item.text_for(a.round.text_field)[:20] in row
    assert ">to do<" in body and ">skipped<" in body and ">done<" in body
    assert "1 done, 1 skipped, 2 to do" in body


@pytest.mark.parametrize(
    ("status", "positions"), [("done", ["1"]), ("skipped", ["2"]), ("pending", ["3", "4"])]
)
def test_my_items_filters_by_status_as_a_page_and_as_an_htmx_fragment(
    client, annotator, worked, status, positions
):
    client.force_login(annotator)
    url = reverse("round_items", args=[worked[0].round_id])
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = client.get(url, {"status": status}, **headers)
        assert response.status_code == 200
        body = response.content.decode()
        assert re.findall(r'data-position="(\d+)"', body) == positions
        assert ("<html" in body) is not bool(headers)  # the fragment alone for htmx
        assert f'<option value="{status}" selected>' in body or headers


def test_an_unknown_status_filter_is_a_400_naming_it(client, annotator, worked):
    client.force_login(annotator)
    response = client.get(reverse("round_items", args=[worked[0].round_id]), {"status": "finished"})
    assert response.status_code == 400
    body = response.content.decode()
    assert "status" in body and "finished" in body


def test_my_items_of_a_round_i_have_no_items_in_is_a_404(client, items, annotator, other_annotator):
    round_ = round_create(
        name="bob only",
        item_set=item_set_from_items(name="set-bob", items=items),
        annotators=[other_annotator],
        annotators_per_item=1,
    )
    client.force_login(annotator)
    assert client.get(reverse("round_items", args=[round_.pk])).status_code == 404
    client.force_login(other_annotator)
    assert client.get(reverse("round_items", args=[round_.pk])).status_code == 200


def test_my_items_is_reachable_from_the_queue_and_the_annotation_page(client, annotator, worked):
    client.force_login(annotator)
    url = reverse("round_items", args=[worked[0].round_id])
    assert f'href="{url}"' in client.get(reverse("queue")).content.decode()
    assert link(client.get(reverse("annotate", args=[worked[2].pk])).content.decode(), "round-items") == url


def test_my_items_needs_a_login(client, worked):
    response = client.get(reverse("round_items", args=[worked[0].round_id]))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_progress_tells_a_rounds_settled_share_from_an_annotators_done_share():
    from annotator.selectors import Progress

    p = Progress(assigned=4, done=1, skipped=1)
    assert (p.pending, p.percent, p.done_percent) == (2, 50, 25)
    assert Progress(0, 0, 0).percent == Progress(0, 0, 0).done_percent == 0
