"""annotator.api.fields_built_once: a ModelSerializer's fields built once, answering and documented
as the ModelSerializer would (same values, same order, same schema), each instance with its own
context."""

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from annotator.api import fields_built_once
from annotator.models import Assignment
from annotator.services import annotation_submit
from tests.factories import PRED

pytestmark = pytest.mark.django_db


class AssignmentModelOut(serializers.ModelSerializer):
    """An assignment with a method field that reads its context."""

    round = serializers.CharField(source="round.name")
    marker = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = ["id", "round", "status", "position", "marker"]

    def get_marker(self, obj: Assignment) -> str:
        return f"{self.context['marker']}-{obj.pk}"


AssignmentBuiltOut = fields_built_once(AssignmentModelOut)


def test_it_answers_as_the_model_serializer_with_each_instances_own_context(prefilled_round, annotator):
    a, b = Assignment.objects.filter(annotator=annotator).order_by("position")[:2]
    annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    a.refresh_from_db()
    for obj, marker in ((a, "x"), (b, "y")):
        built = AssignmentBuiltOut(obj, context={"marker": marker}).data
        assert built == AssignmentModelOut(obj, context={"marker": marker}).data
        assert list(built) == ["id", "round", "status", "position", "marker"]
        assert built["marker"] == f"{marker}-{obj.pk}"
    both = AssignmentBuiltOut([a, b], many=True, context={"marker": "z"}).data
    assert [row["status"] for row in both] == ["done", "pending"]
    # each instance binds copies: the fields built once stay unbound
    assert all(
        f.parent is None and f.field_name is None for f in AssignmentBuiltOut._declared_fields.values()
    )


def test_the_api_documents_the_built_serializers_as_their_models(settings):
    schema = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    annotation = schema["AnnotationOut"]
    assert annotation["properties"]["experiencer"] == {"type": "string", "maxLength": 32}
    assert annotation["properties"]["updated_at"] == {
        "type": "string",
        "format": "date-time",
        "readOnly": True,
    }
    assert list(schema["AssignmentOut"]["properties"])[:5] == ["id", "round", "mode", "status", "position"]
