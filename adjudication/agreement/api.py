"""The analytics through the API (adjudicators and admins): agreement, conflicts, flows, anchoring."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from adjudication.agreement.analysis import (
    anchoring,
    conflicts_matching,
    describe_rows,
    pass_flows,
    passes_for,
    round_analysis,
)
from adjudication.agreement.forms import ConflictQuery
from adjudication.forms import form_problems
from annotator.models import Round
from annotator.roles import ADJUDICATOR, ADMIN, HasRole
from annotator.search import SEARCH_HELP
from nsmcore.schema import SLOT_NAMES

IsAdjudicatorOrAdmin = HasRole(
    ADJUDICATOR, ADMIN, message=gettext_lazy("agreement analytics are for adjudicators and admins")
)


class RoundView(APIView):
    permission_classes = [IsAuthenticated & IsAdjudicatorOrAdmin]

    def round(self, round_id: int) -> Round:
        return get_object_or_404(Round, pk=round_id)


INTENSITY_LEVELS = ("nominal", "ordinal")


class Agreement(RoundView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "intensity",
                str,
                enum=list(INTENSITY_LEVELS),
                description="intensity's level (default nominal)",
            )
        ],
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse(description="an unknown level")},
    )
    def get(self, request: Request, round_id: int) -> Response:
        level = request.query_params.get("intensity", "nominal")
        if level not in INTENSITY_LEVELS:
            return Response(
                {
                    "intensity": [
                        _("%(level)s is not a level; levels: nominal, ordinal") % {"level": repr(level)}
                    ]
                },
                status=400,
            )
        levels = {"intensity": level} if level == "ordinal" else {}
        analysis = round_analysis(self.round(round_id), levels=levels)
        found = analysis.conflicts
        return Response(
            {
                **analysis.report.as_dict(),
                "coder_names": analysis.data.coder_names,
                "conflicts": {
                    "items": len(found.items),
                    "disagreeing_pairs": found.disagreeing_pairs,
                    "median_differing_slots": found.median_differing_slots,
                    "per_slot": found.per_slot,
                },
            }
        )


class ConflictList(RoundView):
    @extend_schema(
        parameters=[
            OpenApiParameter("slot", str, enum=["", *SLOT_NAMES], description="empty: any slot"),
            OpenApiParameter("a", str, description="a value of the slot"),
            OpenApiParameter("b", str, description="a value of the slot"),
            OpenApiParameter("q", str, description=SEARCH_HELP),
            OpenApiParameter("page", {"type": "integer", "minimum": 1}, description="from 1"),
        ],
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(description="an unknown slot, a value not of it, a bad page: each named"),
        },
    )
    def get(self, request: Request, round_id: int) -> Response:
        round_ = self.round(round_id)
        query = ConflictQuery(request.query_params)  # the page's own form: the same values refused
        if not query.is_valid():  # the field at fault, and a detail as every other 400 has
            return Response({"detail": form_problems(query), **query.errors}, status=400)
        q = query.cleaned_data
        analysis = round_analysis(round_)
        matching = conflicts_matching(round_, analysis, q)
        page = Paginator(matching, 50).get_page(q["page"])
        return Response(
            {
                "count": len(matching),
                "page": page.number,
                "pages": page.paginator.num_pages,
                "coders": analysis.data.coder_names,
                "results": [
                    {"item": c.item_id, "source_id": c.source_id, "slots": list(c.slots), "values": c.values}
                    for c in describe_rows(analysis, list(page.object_list))
                ],
            }
        )


class Flows(RoundView):
    @extend_schema(
        parameters=[
            OpenApiParameter("a", str, description="a pass of the round (empty: its first)"),
            OpenApiParameter("b", str, description="another pass (empty: its second)"),
        ],
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(description="not two different passes of the round: its passes are listed"),
        },
    )
    def get(self, request: Request, round_id: int) -> Response:
        passes = {p.key: p for p in passes_for(self.round(round_id))}
        keys = list(passes)
        # an empty a or b is one not given, as on the page's form: the round's first two passes
        a = passes.get(request.query_params.get("a") or (keys[0] if keys else ""))
        b = passes.get(request.query_params.get("b") or (keys[1] if len(keys) > 1 else ""))
        if a is None or b is None:
            return Response({"detail": _("choose two passes"), "passes": keys}, status=400)
        if a == b:
            return Response(
                {
                    "detail": _("a and b are the same pass (%(pass)s): choose two passes") % {"pass": a.key},
                    "passes": keys,
                },
                status=400,
            )
        shared, found = pass_flows(a, b)
        return Response(
            {
                "a": a.key,
                "b": b.key,
                "items": shared,
                "flows": [
                    {"slot": f.slot, "a": f.a, "b": f.b, "count": f.count, "share_of_a": f.share_of_a}
                    for f in found
                ],
                "passes": keys,
            }
        )


class Anchoring(RoundView):
    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, round_id: int) -> Response:
        round_ = self.round(round_id)
        raw = {s.slot: s.raw for s in round_analysis(round_).report.slots}
        return Response(
            {
                "annotators": [
                    {
                        "annotator": r.annotator,
                        "annotations": r.annotations,
                        "kept": r.kept,
                        "overall": r.overall,
                    }
                    for r in anchoring(round_)
                ],
                "raw_agreement": raw,
            }
        )
