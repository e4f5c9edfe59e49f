"""REST API: items (adjudicators and admins), my assignments, annotation submit and history."""

from __future__ import annotations

from typing import Any

from django.http import QueryDict
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.api_fields import printable
from annotator.filters import AssignmentFilter, ItemFilter
from annotator.models import FLAGS, SLOT_FIELDS, Annotation, AnnotationRevision, Assignment, Item
from annotator.roles import ADJUDICATOR, ADMIN, HasRole, IsMember
from annotator.selectors import assignment_for_user, prefill_of, prefills_for
from annotator.services import (
    TEXT_MAX_CHARS,
    TIME_SPENT_MAX_MS,
    VERSION_MAX,
    annotation_submit,
)
from nsmcore.schema import SLOTS

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR,
    ADMIN,
    message=gettext_lazy("items with their reference labels are for adjudicators and admins"),
)


class ItemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = [
            "id",
            "source",
            "source_id",
            "text",
            "masked_text",
            "reference_label",
            "appraisals",
            "metadata",
        ]


class ItemList(generics.ListAPIView):
    """Items with their reference labels. Annotators are refused: they must not see labels."""

    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]
    serializer_class = ItemSerializer
    queryset = Item.objects.order_by("id")
    filterset_class = ItemFilter


class ItemDetail(generics.RetrieveAPIView):
    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]
    serializer_class = ItemSerializer
    queryset = Item.objects.all()


# The fetch and the submit answer with these on every request (benchmarks/bench_load.py), so each
# writes its representation by hand: DRF's generic one binds a copy of every field for every
# instance and reads each value through its field (16% of a fetch and its submit under cProfile;
# in alternating in-process runs a pair took a median 7.8 ms of CPU against 8.2). The declared
# fields stay what the schema documents, and tests/annotator/test_api_representations.py checks
# that the hand-written representation is DRF's, value for value and in the same order.
_UPDATED_AT = serializers.DateTimeField()  # DRF's format for a datetime: ISO 8601, the current zone


class AnnotationOut(serializers.ModelSerializer):
    class Meta:
        model = Annotation
        fields = [
            *SLOT_FIELDS,
            "residue",
            "notes",
            "flags",
            "kept_prefill",
            "time_spent_ms",
            "version",
            "updated_at",
        ]

    def to_representation(self, annotation: Annotation) -> dict[str, Any]:
        return {
            **{name: getattr(annotation, name) for name in SLOT_FIELDS},
            "residue": annotation.residue,
            "notes": annotation.notes,
            "flags": annotation.flags,
            "kept_prefill": annotation.kept_prefill,
            "time_spent_ms": annotation.time_spent_ms,
            "version": annotation.version,
            "updated_at": _UPDATED_AT.to_representation(annotation.updated_at),
        }


class AssignmentOut(serializers.ModelSerializer):
    round = serializers.CharField(source="round.name")
    mode = serializers.CharField(source="round.mode")
    item_id = serializers.IntegerField()
    text = serializers.SerializerMethodField()
    prefill = serializers.SerializerMethodField()
    annotation = serializers.SerializerMethodField()

    class Meta:
        model = Assignment
        fields = ["id", "round", "mode", "status", "position", "item_id", "text", "prefill", "annotation"]

    def to_representation(self, assignment: Assignment) -> dict[str, Any]:
        return {
            "id": assignment.pk,
            "round": assignment.round.name,
            "mode": str(assignment.round.mode),
            "status": str(assignment.status),
            "position": assignment.position,
            "item_id": assignment.item_id,
            "text": self.get_text(assignment),
            "prefill": self.get_prefill(assignment),
            "annotation": self.get_annotation(assignment),
        }

    def get_text(self, obj: Assignment) -> str:
        return obj.item.text_for(obj.round.text_field)

    def get_prefill(self, obj: Assignment) -> dict[str, str] | None:
        # Blind rounds: None whatever the parser said (neither lookup reads predictions for them).
        batch = self.context.get("prefills")
        if batch is not None:
            return batch.get((obj.round_id, obj.item_id))
        return prefill_of(obj)

    def get_annotation(self, obj: Assignment) -> dict[str, Any] | None:
        annotation = getattr(obj, "annotation", None)
        return AnnotationOut(annotation).data if annotation else None


class MyAssignments(generics.ListAPIView):
    """The requesting annotator's assignments: the item text as the round shows it, never the
    reference label; the parser prefill only in prefilled rounds."""

    permission_classes = [IsMember]
    serializer_class = AssignmentOut
    filterset_class = AssignmentFilter  # ?round=<name or id>&status=<pending|done|skipped>

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no user
            return Assignment.objects.none()
        qs = Assignment.objects.filter(annotator=self.request.user).select_related(
            "round", "item", "annotation"
        )
        return qs.order_by("round_id", "position")

    def get_serializer(self, *args: Any, **kwargs: Any) -> AssignmentOut:
        if args and isinstance(args[0], list):  # one page: look its prefills up in one query
            kwargs["context"] = {**self.get_serializer_context(), "prefills": prefills_for(args[0])}
        return super().get_serializer(*args, **kwargs)


class MyAssignment(APIView):
    permission_classes = [IsMember]

    @extend_schema(responses=AssignmentOut)
    def get(self, request: Request, pk: int) -> Response:
        return Response(AssignmentOut(assignment_for_user(request.user, pk)).data)


def _slot_field(slot: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=list(slot.values), help_text=f"default {slot.default}")


# Documents the request body; validation itself is nsmcore's, so errors name slot and values.
AnnotationIn = type(
    "AnnotationIn",
    (serializers.Serializer,),
    {
        **{slot.name: _slot_field(slot) for slot in SLOTS},
        "residue": serializers.CharField(
            required=False, allow_blank=True, default="", max_length=TEXT_MAX_CHARS
        ),
        "notes": serializers.CharField(
            required=False, allow_blank=True, default="", max_length=TEXT_MAX_CHARS
        ),
        "flags": serializers.ListField(child=serializers.ChoiceField(choices=list(FLAGS)), required=False),
        "base_version": serializers.IntegerField(
            min_value=0, max_value=VERSION_MAX, help_text="the version you loaded; 0 at first"
        ),
        "time_spent_ms": serializers.IntegerField(
            min_value=0, max_value=TIME_SPENT_MAX_MS, required=False, default=0
        ),
        "refuses_unknown_fields": True,  # the view answers an unknown field with a 400 naming it
    },
)
ACCEPTED = {*SLOT_FIELDS, "residue", "notes", "flags", "base_version", "time_spent_ms"}


def _values(data: Any) -> dict[str, Any]:
    if isinstance(data, QueryDict):  # form-encoded: flags may repeat
        return {k: data.get(k) for k in data} | {"flags": data.getlist("flags")}
    return dict(data)


def _whole(value: Any) -> Any:
    """A number as a form-encoded body (or a lenient JSON client) spells it: "12" is 12; anything
    else is passed on as it is, for the service to name."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().lstrip("+-").isdigit():
        return int(value)
    return value


class AnnotationSubmit(APIView):
    permission_classes = [IsMember]

    @extend_schema(
        request=AnnotationIn,
        responses={
            200: AnnotationOut,
            400: OpenApiResponse(description="errors by field, each with the message and allowed values"),
            409: OpenApiResponse(description="stale save: the annotation changed since base_version"),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        assignment = assignment_for_user(request.user, pk)
        if not hasattr(request.data, "keys"):
            return Response({"detail": _("expected a JSON object")}, status=status.HTTP_400_BAD_REQUEST)
        data = _values(request.data)
        unknown = sorted(printable(k) for k in set(data) - ACCEPTED)
        if unknown:
            return Response(
                {k: {"message": _("unknown field")} for k in unknown}, status=status.HTTP_400_BAD_REQUEST
            )
        if "base_version" not in data:
            return Response({"base_version": {"message": _("required; 0 for a first save")}}, status=400)
        # The service checks every value, numbers included (range, and no booleans).
        annotation = annotation_submit(
            assignment=assignment,
            user=request.user,
            values=data,
            base_version=_whole(data["base_version"]),
            time_spent_ms=_whole(data.get("time_spent_ms", 0)),
        )
        return Response(AnnotationOut(annotation).data)


class RevisionOut(serializers.ModelSerializer):
    class Meta:
        model = AnnotationRevision
        fields = [
            "version",
            "slots",
            "residue",
            "notes",
            "flags",
            "kept_prefill",
            "time_spent_ms",
            "created_at",
        ]


class AnnotationHistory(APIView):
    permission_classes = [IsMember]

    @extend_schema(responses=RevisionOut(many=True))
    def get(self, request: Request, pk: int) -> Response:
        assignment = assignment_for_user(request.user, pk)
        revisions = AnnotationRevision.objects.filter(annotation__assignment=assignment).order_by("version")
        return Response(RevisionOut(revisions, many=True).data)
