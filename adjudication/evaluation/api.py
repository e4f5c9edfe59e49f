"""A round's evaluation through the API: ``GET /api/rounds/<id>/evaluation/?pass=KEY`` returns
the report's ``to_dict()`` (every section with its evidence), for adjudicators and admins. A
parser pass adds ``parser_vs_gold`` (``adjudication.evaluation.parser``) on the round's items or
``?heldout=NAME``."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from adjudication.agreement.api import RoundView
from adjudication.evaluation.figures import (
    DEFAULT_ORDERS,
    MAX_ORDERS,
    PARSER,
    EvaluationRequestError,
    PassEvaluation,
    evaluation_passes,
    item_set_named,
    options_from,
    paired_split,
    pass_evaluation,
)
from adjudication.evaluation.parser import heldout_named, parser_vs_gold
from adjudication.evaluation.parser_curve import registered_curve
from rules.rulesets import active_rule_set


def _doc(evaluation: PassEvaluation) -> dict[str, Any]:
    report = evaluation.report.to_dict() if evaluation.report else None
    return {
        "pass": evaluation.pass_.key,
        "item_set": {"name": evaluation.item_set, "size": evaluation.item_set_size},
        "items": evaluation.items,
        **(
            report
            or {
                "report": None,
                "detail": _("pass %(pass)s has no item in the item set") % {"pass": evaluation.pass_.key},
            }
        ),
    }


class Evaluation(RoundView):
    @extend_schema(
        parameters=[
            OpenApiParameter("pass", str, description="annotator:<username>, parser:<name> or gold"),
            OpenApiParameter("compare", str, description="a second pass, reported under 'compare'"),
            OpenApiParameter("item_set", str, description="score on this item set's items"),
            OpenApiParameter(
                "heldout",
                str,
                description="a parser pass's parser_vs_gold on this item set (default: the round's)",
            ),
            OpenApiParameter(
                "orders",
                {"type": "integer", "minimum": 0, "maximum": MAX_ORDERS},
                description=f"random priority orders (default {DEFAULT_ORDERS}, at most {MAX_ORDERS})",
            ),
            OpenApiParameter("seed", {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}),
            OpenApiParameter(
                "swap", str, many=True, description="a:b, two different emotions (default guilt:shame)"
            ),
            OpenApiParameter(
                "decay",
                {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1},
                description="priority-decay base in (0, 1]",
            ),
        ],
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(
                description="a parameter out of range or naming nothing: the round's passes are listed"
            ),
        },
    )
    def get(self, request: Request, round_id: int) -> Response:
        round_ = self.round(round_id)
        passes = [p.key for p in evaluation_passes(round_)]
        rule_set = active_rule_set()
        params = request.query_params
        try:
            options = options_from(params, rule_set)
            item_set = item_set_named(params.get("item_set", ""))
            heldout = heldout_named(params.get("heldout", ""))
            key = params.get("pass") or (passes[0] if passes else "")
            if not key:
                raise EvaluationRequestError(_("round %(round)s has no pass yet") % {"round": round_.name})
            main = pass_evaluation(round_, key, options=options, item_set=item_set, rule_set=rule_set)
            compare = params.get("compare", "")
            if compare == key:
                raise EvaluationRequestError(
                    _("compare is the same pass as pass (%(pass)s): choose another pass") % {"pass": key}
                )
            other = (
                pass_evaluation(round_, compare, options=options, item_set=item_set, rule_set=rule_set)
                if compare
                else None
            )
            parser = (
                parser_vs_gold(round_, key, heldout=heldout, rule_set=rule_set)
                if main.pass_.kind == PARSER
                else None
            )
        except EvaluationRequestError as error:
            return Response({"detail": str(error), "passes": passes}, status=400)
        doc = {"round": round_.name, **_doc(main), "passes": passes}
        if parser is not None:
            doc["parser_vs_gold"] = parser.to_dict()
            scope = heldout or round_.item_set
            doc["registered_parsers"] = [p.to_dict() for p in registered_curve(round_, scope, rule_set)]
        if other is not None:
            doc["compare"] = _doc(other)
            split = paired_split(main, other)
            # the two passes on the items both score, with McNemar's exact test (issue 26)
            doc["paired"] = split.to_dict() if split else None
        return Response(doc)
