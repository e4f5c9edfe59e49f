"""What the admin API's resources share (annotator.import_api, item_set_api, round_api): the admin
role, refusals and their answers, links and progress.

Answers: 400 names the field at fault (an import problem names its line and column), 409 a
conflict with what exists (a taken name, a blind round over items its annotators saw
prefilled, a pool change that does not apply), 401 without credentials, 403 for non-admins.
Every refused request writes nothing.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.roles import ADMIN, HasRole
from annotator.selectors import Progress

IsAdmin = HasRole(ADMIN, message=_("importing, item sets and rounds are for admins"))


class AdminApi(APIView):
    permission_classes = [IsAuthenticated & IsAdmin]


class Refused(Exception):
    """A request refused with ``status`` and ``body``, raised inside the transaction so that
    everything it wrote is rolled back."""

    def __init__(self, status_code: int, body: dict[str, Any]):
        self.status_code = status_code
        self.body = body
        super().__init__(str(body))

    @property
    def api_status(self) -> int:
        return self.status_code

    def api_body(self) -> dict[str, Any]:
        return self.body


def _refuse(error: Refused) -> Response:
    return Response(error.body, status=error.status_code)


BAD = OpenApiResponse(description="bad input: each field at fault with its messages")


NO_CREDENTIALS = OpenApiResponse(description="no or wrong credentials")


NOT_ADMIN = OpenApiResponse(description="not an admin")


NOT_FOUND = OpenApiResponse(description="no such object")


NO_PAGE = OpenApiResponse(description="no such page")


CONFLICT = OpenApiResponse(description="conflicts with what exists: a taken name, prefill overlap")


class ProgressOut(serializers.Serializer):
    assigned = serializers.IntegerField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    pending = serializers.IntegerField()
    percent = serializers.IntegerField(help_text="share settled (done or skipped)")


def _link(request: Request | None, name: str, pk: int, *, kwarg: str = "pk") -> str:
    path = reverse(name, kwargs={kwarg: pk})
    return request.build_absolute_uri(path) if request is not None else path


def _progress(p: Progress) -> dict[str, int]:
    return {"assigned": p.assigned, "done": p.done, "skipped": p.skipped, "pending": p.pending,
            "percent": p.percent}  # fmt: skip


def _conflict(field: str, message: str, **more: Any) -> Refused:
    """A 409: ``detail`` as every DRF error has it, and the field the conflict is about."""
    return Refused(status.HTTP_409_CONFLICT, {"detail": message, field: [message], **more})
