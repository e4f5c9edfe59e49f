"""annotator.queries.assignment_with_annotation, the API's one read of an assignment: the same
model instances as the ORM's select_related gives (converted values, JSON and times included), the
newest legal prediction, nothing of another annotator's, and no further query for the relations.
tests/integration/test_postgres.py runs these on PostgreSQL too."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotator.models import Annotation, Assignment, ParserPrediction
from annotator.queries import assignment_with_annotation
from annotator.selectors import prefill_of
from annotator.services import annotation_submit
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def orm(assignment_id: int) -> Assignment:
    return Assignment.objects.select_related("round", "item", "annotation").get(pk=assignment_id)


def mine(round_, user) -> Assignment:
    return Assignment.objects.filter(round=round_, annotator=user).order_by("position").first()


def test_it_builds_what_the_orm_builds_before_and_after_a_save(prefilled_round, annotator):
    a = mine(prefilled_round, annotator)
    before = assignment_with_annotation(annotator.pk, a.pk)
    expected = orm(a.pk)
    assert values(before) == values(expected)
    assert values(before.round) == values(expected.round)
    assert values(before.item) == values(expected.item)
    assert isinstance(before.item.appraisals, dict | list | type(None))  # JSON decoded, not text
    with pytest.raises(Annotation.DoesNotExist):
        before.annotation  # noqa: B018  (as after select_related of a missing one-to-one)

    saved = annotation_submit(
        assignment=before,
        user=annotator,
        values=PRED | {"notes": "ü ✓", "flags": ["two-construals"]},
        base_version=0,
    )
    after = assignment_with_annotation(annotator.pk, a.pk)
    assert values(after.annotation) == values(orm(a.pk).annotation) == values(saved)
    assert after.annotation.flags == ["two-construals"] and after.annotation.prefill == PRED
    assert after.annotation.updated_at.tzinfo is not None  # an aware time, as the ORM gives
    assert after.status == Assignment.Status.DONE


def test_the_relations_need_no_further_query(prefilled_round, annotator):
    a = mine(prefilled_round, annotator)
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    with CaptureQueriesContext(connection) as queries:
        got = assignment_with_annotation(annotator.pk, a.pk)
        assert (got.round.name, got.item.pk, got.annotation.version) == ("prefilled", a.item_id, 1)
        assert got.annotation.assignment is got
    assert len(queries.captured_queries) == 1


def test_another_annotators_or_a_missing_assignment_is_none(prefilled_round, annotator, other_annotator):
    theirs = mine(prefilled_round, other_annotator)
    assert assignment_with_annotation(annotator.pk, theirs.pk) is None
    assert assignment_with_annotation(annotator.pk, 10**9) is None
    assert assignment_with_annotation(other_annotator.pk, theirs.pk).pk == theirs.pk


def test_the_prefill_is_the_newest_legal_prediction_of_the_rounds_parser(prefilled_round, annotator):
    a = mine(prefilled_round, annotator)
    now = timezone.now()
    newer = PRED | {"body": "yes"}
    ParserPrediction.objects.filter(item_id=a.item_id).update(created_at=now - timedelta(hours=2))
    ParserPrediction.objects.create(
        item_id=a.item_id, parser="lex", parser_version="2", explication=newer, legal=True
    )
    # newer still, but not legal, or of another parser: neither is the prefill
    ParserPrediction.objects.create(
        item_id=a.item_id, parser="lex", parser_version="3", explication=PRED | {"want": "x"}, legal=False
    )
    ParserPrediction.objects.create(item_id=a.item_id, parser="other", explication=PRED, legal=True)
    got = assignment_with_annotation(annotator.pk, a.pk)
    assert got.newest_prefill == newer
    assert prefill_of(got) == newer


def test_a_blind_round_shows_no_prefill_though_the_parser_has_one(blind_round, annotator):
    a = mine(blind_round, annotator)
    assert prefill_of(assignment_with_annotation(annotator.pk, a.pk)) is None
