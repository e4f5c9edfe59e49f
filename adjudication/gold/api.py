"""Gold records through the API, for scripts: the list with the page's filters, open the records
whose annotations are all in, read one with its audit trail, preview and resolve. The services
are the pages' (``adjudication.gold.services``); adjudicators and admins read and open, only adjudicators
resolve (adjudication.api_common has the rules shared with the conventions API)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from adjudication.api_common import (
    ID_RANGE,
    WHY_MISSING,
    AdjudicatorsAndAdmins,
    SlotsOut,
    SlotValues,
    StaleOut,
    _errors,
    _invalid,
    _View,
    _written,
)
from adjudication.gold.audit import gold_audit_trail
from adjudication.gold.filters import REVIEW, GoldFilter
from adjudication.gold.preview import GoldPreview, gold_preview
from adjudication.gold.review_marks import gold_revised
from adjudication.gold.selectors import gold_awaiting
from adjudication.gold.services import (
    ADJUDICATED,
    CONVENTION,
    UNANIMOUS,
    gold_resolve,
    gold_sync,
    gold_version,
)
from adjudication.models import GoldConstrual, GoldItem
from annotator.api_fields import Text, Whole
from annotator.models import Annotation, Round
from annotator.search import SEARCH_HELP


class ProvenanceOut(serializers.Serializer):
    source = serializers.ChoiceField(choices=[UNANIMOUS, CONVENTION, ADJUDICATED])
    convention = serializers.IntegerField(required=False, help_text="its number, when set by one")
    version = serializers.IntegerField(required=False, help_text="the convention's version")
    by = serializers.CharField(required=False, help_text="who applied or chose it")


class ConstrualOut(serializers.ModelSerializer):
    slots = SlotsOut()
    provenance = serializers.DictField(child=ProvenanceOut(), help_text="slot -> how it was set")
    rule = serializers.IntegerField(allow_null=True, help_text="the rule that routed it")
    fired = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = GoldConstrual
        fields = ["index", "slots", "provenance", "residue", "notes", "label", "rule", "fired",
                  "abstention", "rule_set_version"]  # fmt: skip


class GoldOut(serializers.Serializer):
    item_id = serializers.IntegerField()
    source_id = serializers.CharField(source="item.source_id")
    round = serializers.IntegerField(source="round_id")
    status = serializers.ChoiceField(choices=GoldItem.Status.choices)
    needs_review = serializers.BooleanField()
    review_reason = serializers.CharField()
    pivotal_slots = serializers.ListField(child=serializers.CharField())
    updated_at = serializers.DateTimeField()
    version = serializers.SerializerMethodField(
        help_text="changes in its audit trail: send it back as base_version when resolving"
    )
    sources = serializers.SerializerMethodField(help_text="how its slots were set")
    construals = ConstrualOut(many=True, source="construals.all")

    def get_version(self, gold: GoldItem) -> int:
        counted = getattr(gold, "changes_count", None)
        return counted if counted is not None else gold_version(gold)

    def get_sources(self, gold: GoldItem) -> list[str]:
        return sorted({p.get("source") for c in gold.construals.all() for p in c.provenance.values()})


class LineOut(serializers.Serializer):
    slot = serializers.CharField()
    value = serializers.CharField()
    text = serializers.CharField()


class RoutingOut(serializers.Serializer):
    label = serializers.CharField()
    rule = serializers.IntegerField(source="rule_index", allow_null=True)
    fired = serializers.ListField(child=serializers.CharField())
    abstention = serializers.CharField(source="abstention_type", allow_null=True)
    rule_set_version = serializers.CharField()


class ConstrualPreviewOut(serializers.Serializer):
    index = serializers.IntegerField()
    lines = LineOut(many=True)
    routing = RoutingOut(allow_null=True, help_text="null while a slot is unresolved")
    unresolved = serializers.ListField(child=serializers.CharField())
    pivotal = serializers.ListField(child=serializers.CharField())


class GoldPreviewOut(serializers.Serializer):
    construals = ConstrualPreviewOut(many=True)
    same_label = serializers.CharField(
        allow_null=True, help_text="the label both construals route to, when they route to the same"
    )
    pivotal = serializers.ListField(child=serializers.CharField())


class GoldAnnotationOut(serializers.Serializer):
    annotator = serializers.CharField(source="assignment.annotator.username")
    slots = SlotsOut()
    residue = serializers.CharField()
    notes = serializers.CharField()


class ChangeOut(serializers.Serializer):
    at = serializers.DateTimeField()
    who = serializers.CharField()
    kind = serializers.CharField(help_text="opened, convention, adjudicated or rule-set")
    why = serializers.CharField()
    diffs = serializers.SerializerMethodField()
    unresolved = serializers.ListField(child=serializers.CharField())

    def get_diffs(self, entry: Any) -> list[str]:
        return [d.text for d in entry.diffs]


class GoldDetailOut(GoldOut):
    text = serializers.SerializerMethodField()
    annotations = serializers.SerializerMethodField()
    preview = serializers.SerializerMethodField()
    changes = serializers.SerializerMethodField(help_text="the audit trail, newest first")

    def get_text(self, gold: GoldItem) -> str:
        return gold.item.text_for(gold.round.text_field)

    @extend_schema_field(GoldAnnotationOut(many=True))
    def get_annotations(self, gold: GoldItem) -> list[dict[str, Any]]:
        rows = (
            Annotation.objects.filter(
                assignment__round_id=gold.round_id,
                assignment__item_id=gold.item_id,
                assignment__status="done",
            )
            .select_related("assignment__annotator")
            .order_by("assignment__annotator__username")
        )
        return GoldAnnotationOut(rows, many=True).data

    @extend_schema_field(GoldPreviewOut)
    def get_preview(self, gold: GoldItem) -> dict[str, Any]:
        construals = list(gold.construals.all())
        first, second = construals[0], (construals[1] if len(construals) > 1 else None)
        return _preview_doc(
            gold_preview(first=first.slots, second=second.slots if second else None, residue=first.residue)
        )

    @extend_schema_field(ChangeOut(many=True))
    def get_changes(self, gold: GoldItem) -> list[dict[str, Any]]:
        return ChangeOut(gold_audit_trail(gold), many=True).data


def _preview_doc(preview: GoldPreview) -> dict[str, Any]:
    return GoldPreviewOut(
        {"construals": preview.construals, "same_label": preview.same_label, "pivotal": preview.pivotal}
    ).data


def _gold(round_id: int, item_id: int) -> GoldItem:
    if not all(ID_RANGE["minimum"] <= i <= ID_RANGE["maximum"] for i in (round_id, item_id)):
        # Django spares a primary key lookup this, not a foreign key's: SQLite would overflow (500)
        raise Http404(_("no gold record has these ids"))
    rows = GoldItem.objects.select_related("item", "round").prefetch_related("construals")
    rows = rows.annotate(changes_count=Count("changes", distinct=True))
    return get_object_or_404(rows, round_id=round_id, item_id=item_id)


class GoldPageOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="records matching the filters")
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    total = serializers.IntegerField(help_text="the round's gold records")
    resolved = serializers.IntegerField()
    awaiting = serializers.IntegerField(help_text="items ready for a record not opened yet")
    revised = serializers.IntegerField(
        help_text="records built from annotations revised since: POST open/ marks them for review"
    )
    results = GoldOut(many=True)


class GoldList(_View):
    @extend_schema(
        parameters=[
            # an empty filter is no filter, as on the page's form
            OpenApiParameter("status", str, enum=["", "open", "resolved", REVIEW], description="empty: any"),
            OpenApiParameter("label", str, description="the first construal's routed label"),
            OpenApiParameter(
                "source",
                str,
                enum=["", UNANIMOUS, CONVENTION, ADJUDICATED],
                description="provenance: any slot set this way (empty: any)",
            ),
            OpenApiParameter("q", str, description=SEARCH_HELP),
            OpenApiParameter("page", {"type": "integer", "minimum": 1}),
        ],
        operation_id="rounds_gold_list",
        responses={200: GoldPageOut, **_errors(400, 401, 403, 404)},
        description="The round's gold records, 50 a page, by item; a GET opens none (see awaiting).",
    )
    def get(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        rows = GoldItem.objects.filter(round=round_)
        filters = GoldFilter(request.query_params, queryset=rows)
        if not filters.is_valid():
            problems = {name: list(messages) for name, messages in filters.errors.items()}
            return Response(problems, status=status.HTTP_400_BAD_REQUEST)
        shown = (
            filters.qs.select_related("item")
            .prefetch_related("construals")
            .annotate(changes_count=Count("changes", distinct=True))
            .order_by("item__source_id", "pk")
        )
        pages = api_settings.DEFAULT_PAGINATION_CLASS()  # the API's pages (config.pagination)
        page = pages.paginate_queryset(shown, request, view=self)
        doc = {
            "count": pages.page.paginator.count,
            "next": pages.get_next_link(),
            "previous": pages.get_previous_link(),
            "total": rows.count(),
            "resolved": rows.filter(status=GoldItem.Status.RESOLVED).count(),
            "awaiting": gold_awaiting(round_),
            "revised": gold_revised(round_),
            "results": page,
        }
        return Response(GoldPageOut(doc).data)


class OpenedOut(serializers.Serializer):
    opened = serializers.IntegerField(help_text="gold records opened now")
    marked = serializers.IntegerField(help_text="records marked for review now (annotations revised)")
    awaiting = serializers.IntegerField(help_text="items still waiting (their annotations are not all in)")


class GoldOpen(_View):
    permission_classes = [IsAuthenticated, AdjudicatorsAndAdmins]

    @extend_schema(
        request=None,
        responses={200: OpenedOut, **_errors(401, 403, 404)},
        description="Open a gold record for every item whose annotations are all in (the gold pages' "
        "button): unanimous slots filled, an item whose slots all agree resolved at once; and mark for "
        "review the records whose annotations were revised since they were built.",
    )
    def post(self, request: Request, round_id: int) -> Response:
        round_ = get_object_or_404(Round, pk=round_id)
        marked = gold_revised(round_)  # what the sync is about to mark (the page's button says it alike)
        opened = gold_sync(round_)
        doc = {"opened": opened, "marked": marked, "awaiting": gold_awaiting(round_)}
        return Response(OpenedOut(doc).data)


class GoldDetail(_View):
    @extend_schema(
        operation_id="rounds_gold_item_retrieve", responses={200: GoldDetailOut, **_errors(401, 403, 404)}
    )
    def get(self, request: Request, round_id: int, item_id: int) -> Response:
        return Response(GoldDetailOut(_gold(round_id, item_id)).data)


class GoldPreviewIn(serializers.Serializer):
    values = SlotValues(required=False, default=dict, help_text="slots of the first construal to set")
    second = SlotValues(
        required=False,
        allow_null=True,
        default=None,
        help_text="keep a second construal: the slots where it differs from the first; "
        "null or absent: one construal (a second one stored is dropped)",
    )


class GoldResolveIn(GoldPreviewIn):
    why = Text(max_length=5000, help_text="it goes into the audit trail", **_written(WHY_MISSING))
    base_version = Whole(
        min_value=0, max_value=2**31 - 1, help_text="the record's version you decided on (GET gives it)"
    )


class GoldPreviewView(_View):
    @extend_schema(
        request=GoldPreviewIn,
        responses={200: GoldPreviewOut, **_errors(400, 401, 403, 404)},
        description="The construals a resolution would give, rendered and routed, unsaved.",
    )
    def post(self, request: Request, round_id: int, item_id: int) -> Response:
        gold = _gold(round_id, item_id)
        data = GoldPreviewIn(data=request.data)
        if not data.is_valid():
            return _invalid(data)
        values, second = data.validated_data["values"], data.validated_data["second"]
        stored = gold.construals.all()[0]
        first = {**stored.slots, **values}
        preview = gold_preview(
            first=first,
            second={**first, **second} if second is not None else None,
            residue=stored.residue,
        )
        return Response(_preview_doc(preview))


def _resolution(v: dict[str, Any]) -> dict[str, Any]:
    return {"values": v["values"], "second": v["second"], "why": v["why"]}


class GoldResolve(_View):
    @extend_schema(
        request=GoldResolveIn,
        responses={
            200: GoldOut,
            **_errors(400, 401, 403, 404),
            409: OpenApiResponse(StaleOut, description="the record changed since base_version"),
        },
        description="Resolve an item by hand (every slot must end up set); the slots given are "
        "marked adjudicated by you.",
    )
    def post(self, request: Request, round_id: int, item_id: int) -> Response:
        gold = _gold(round_id, item_id)
        data = GoldResolveIn(data=request.data)
        if not data.is_valid():
            return _invalid(data)
        v = data.validated_data
        gold_resolve(user=request.user, gold=gold, base_version=v["base_version"], **_resolution(v))
        return Response(GoldOut(_gold(round_id, item_id)).data)
