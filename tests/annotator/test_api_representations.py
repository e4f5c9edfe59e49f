"""annotator.api.AssignmentOut and AnnotationOut write their representations by hand (the fetch's
and the submit's answer): the same values, in the same order, as DRF's own representation from
the fields they declare, which is what the schema documents."""

import pytest
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from annotator.api import AnnotationOut, AssignmentOut
from annotator.models import Assignment, Round
from annotator.selectors import assignment_for_user, prefills_for
from annotator.services import annotation_submit
from tests.factories import PRED

pytestmark = pytest.mark.django_db


def drf(serializer: serializers.Serializer, obj) -> dict:
    """DRF's representation from the declared fields, as it would answer without the hand-written one."""
    return dict(serializers.ModelSerializer.to_representation(serializer, obj))


def test_an_assignment_and_its_annotation_as_drf_would_write_them(prefilled_round, blind_round, annotator):
    Round.objects.filter(pk=blind_round.pk).update(text_field=Round.TEXT_MASKED)
    first, second = Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by(
        "position"
    )[:2]
    annotation_submit(
        assignment=first,
        user=annotator,
        values={**PRED, "notes": "a note", "flags": ["two-construals"]},
        base_version=0,
    )
    blind = Assignment.objects.filter(round=blind_round, annotator=annotator).order_by("position").first()
    annotation_submit(assignment=blind, user=annotator, values=PRED, base_version=0, time_spent_ms=1200)
    shown = [assignment_for_user(annotator, a.pk) for a in (first, second, blind)]
    assert [bool(getattr(a, "annotation", None)) for a in shown] == [True, False, True]
    for assignment in shown:
        written = AssignmentOut(assignment).data
        assert list(written.items()) == list(drf(AssignmentOut(assignment), assignment).items())
    done, pending, blind_done = (AssignmentOut(a).data for a in shown)
    assert done["prefill"] == PRED and blind_done["prefill"] is None and pending["annotation"] is None
    assert blind_done["text"] == blind.item.masked_text != blind.item.text
    annotation = shown[0].annotation
    written = AnnotationOut(annotation).data
    assert list(written.items()) == list(drf(AnnotationOut(annotation), annotation).items())
    assert (written["notes"], written["flags"], written["version"]) == ("a note", ["two-construals"], 1)


def test_a_page_of_assignments_with_its_prefills_looked_up_once(prefilled_round, annotator):
    page = list(Assignment.objects.filter(round=prefilled_round, annotator=annotator).order_by("position"))
    context = {"prefills": prefills_for(page)}
    written = AssignmentOut(page, many=True, context=context).data
    assert written == [drf(AssignmentOut(a, context=context), a) for a in page]
    assert [row["prefill"] for row in written] == [PRED] * len(page)


def test_a_time_in_another_zone_is_written_in_the_current_one(settings, prefilled_round, annotator):
    settings.TIME_ZONE = "Europe/Berlin"
    assignment = Assignment.objects.filter(round=prefilled_round, annotator=annotator).first()
    annotation = annotation_submit(assignment=assignment, user=annotator, values=PRED, base_version=0)
    with timezone.override("Europe/Berlin"):
        written = AnnotationOut(annotation).data["updated_at"]
        assert written == drf(AnnotationOut(annotation), annotation)["updated_at"]
    assert written.endswith(("+01:00", "+02:00"))


def test_the_api_documents_the_declared_fields(settings):
    schema = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    annotation = schema["AnnotationOut"]
    assert annotation["properties"]["experiencer"] == {"type": "string", "maxLength": 32}
    assert annotation["properties"]["updated_at"] == {
        "type": "string",
        "format": "date-time",
        "readOnly": True,
    }
    assert list(schema["AssignmentOut"]["properties"])[:5] == ["id", "round", "mode", "status", "position"]
