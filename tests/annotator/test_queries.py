"""Pages and API lists run a constant number of queries whatever the amount of work (no N+1)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import Assignment, ParserPrediction
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from tests.factories import PRED, make_items

pytestmark = pytest.mark.django_db


def count(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_queue_annotation_page_and_api_list_do_not_grow_with_the_data(client, annotator, other_annotator):
    client.force_login(annotator)
    figures = []
    for size in (1, 6):
        items = make_items(size)[-4 * size :] if size == 1 else make_items(size)
        for item in items:
            ParserPrediction.objects.get_or_create(
                item=item, parser="lex", defaults={"explication": PRED, "legal": True}
            )
        for r in range(size):  # more rounds, more items per round
            item_set = item_set_from_items(name=f"s{size}-{r}", items=items)
            round_ = round_create(
                name=f"r{size}-{r}",
                item_set=item_set,
                annotators=[annotator, other_annotator],
                mode="prefilled",
                prefill_parser="lex",
            )
        assignments = list(Assignment.objects.filter(round=round_, annotator=annotator))
        for a in assignments[:3]:
            annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
        client.get(
            reverse("queue")
        )  # the session's user into the cache (annotator.auth), as on any later request
        figures.append(
            (
                count(client, reverse("queue")),
                count(client, reverse("annotate", args=[assignments[0].pk])),
                count(client, reverse("api_assignments")),
            )
        )
    assert figures[0] == figures[1], figures
