"""REST API of the verification app: start a verification job (admins); a round's verifier
calibration against the adjudicators' entailment judgements (adjudicators and admins)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from adjudication.agreement.api import RoundView
from jobs.api import STARTED, FormStart, form_in
from verification.calibration import calibration_report, report_as_dict, verifier_models
from verification.forms import VerifyForm

VerifyIn = form_in(VerifyForm, scope=("a parser's explications over it", "its resolved gold"))


@extend_schema(request=VerifyIn, responses=STARTED)
class VerifyStart(FormStart):
    """Verify a parser's explications over an item set, or a round's gold, with an NLI model."""

    serializer_class = VerifyIn


class Calibration(RoundView):
    @extend_schema(
        parameters=[OpenApiParameter("model", str, description="model id @ revision; default: the newest")],
        responses={
            200: OpenApiTypes.OBJECT,
            404: OpenApiResponse(description="no such round, or no cached judgement by that model"),
        },
    )
    def get(self, request: Request, round_id: int) -> Response:
        round_ = self.round(round_id)
        models = verifier_models(round_)
        model = request.query_params.get("model") or (models[0] if models else "")
        if not model:
            return Response(
                {"detail": _("no cached verifier judgement for this round's texts"), "models": []}
            )
        if model not in models:
            return Response(
                {"detail": _("no cached judgement by %(model)s") % {"model": repr(model)}, "models": models},
                status=404,
            )
        return Response({**report_as_dict(calibration_report(round_, model)), "models": models})
