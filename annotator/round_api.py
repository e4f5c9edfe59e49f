"""Rounds through the API, for admins: list and create, a round's progress per annotator and
overall, and its pool (add an annotator, who receives a fair share of the pending work; remove
one, whose pending work goes to the others). The same services as the round pages; what the admin
API shares (roles, refusals, the round's fields) is in annotator.manage_api."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.manage_api import (
    BAD,
    CONFLICT,
    NO_CREDENTIALS,
    NO_PAGE,
    NOT_ADMIN,
    NOT_FOUND,
    AdminApi,
    AnnotatorsField,
    PoolChangeOut,
    RoundDetailOut,
    RoundIn,
    RoundListOut,
    _conflict,
    _create_round,
    _progress,
    _refuse,
    _round_detail,
)
from annotator.models import Round
from annotator.round_selectors import (
    rounds_with_progress,
)
from annotator.services import (
    RoundError,
    round_annotator_add,
    round_annotator_remove,
)


class RoundList(generics.ListAPIView, AdminApi):
    """Rounds, newest first, each with its progress; POST creates one with its assignments."""

    serializer_class = RoundListOut

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # the schema generator reads no database
            return Round.objects.none()
        rows = rounds_with_progress()
        for row in rows:
            row.round.progress = _progress(row.progress)
            row.round.pool_size = row.pool_size
        return [row.round for row in rows]

    @extend_schema(
        responses={200: RoundListOut(many=True), 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NO_PAGE}
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=RoundIn,
        responses={201: RoundDetailOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 409: CONFLICT},
    )
    def post(self, request: Request) -> Response:
        form = RoundIn(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        round_ = _create_round(data, name=data["name"], item_set=data["item_set"])
        out = RoundDetailOut(_round_detail(round_), context={"request": request}).data
        return Response(out, status=status.HTTP_201_CREATED)


def _round(pk: int) -> Round:
    return get_object_or_404(Round.objects.select_related("item_set"), pk=pk)


class RoundDetail(AdminApi):
    @extend_schema(responses={200: RoundDetailOut, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NOT_FOUND})
    def get(self, request: Request, pk: int) -> Response:
        return Response(RoundDetailOut(_round_detail(_round(pk)), context={"request": request}).data)


class PoolAddIn(serializers.Serializer):
    annotator = serializers.CharField(max_length=150, help_text="username or id of an active annotator")


def _pool_answer(request: Request, round_: Round, change: Any) -> Response:
    body = {
        "moved": change.moved, "uncovered": change.uncovered,
        "received": change.received, "given": change.given,
        "summary": change.summary(), "round": _round_detail(_round(round_.pk)),
    }  # fmt: skip
    return Response(PoolChangeOut(body, context={"request": request}).data)


class RoundPoolAdd(AdminApi):
    """Add an annotator to the pool; they receive a fair share of the pending work."""

    @extend_schema(
        request=PoolAddIn,
        responses={
            200: PoolChangeOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 404: NOT_FOUND,
            409: OpenApiResponse(description="already in the pool"),
        },
    )  # fmt: skip
    def post(self, request: Request, pk: int) -> Response:
        round_ = _round(pk)
        form = PoolAddIn(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            found = AnnotatorsField().to_internal_value([form.validated_data["annotator"]])
        except serializers.ValidationError as error:
            return Response({"annotator": error.detail}, status=status.HTTP_400_BAD_REQUEST)
        if len(found) != 1:
            return Response({"annotator": ["name one annotator"]}, status=status.HTTP_400_BAD_REQUEST)
        annotator = found[0]
        try:
            change = round_annotator_add(round_=round_, annotator=annotator)
        except RoundError as error:
            return _refuse(_conflict("annotator", str(error)))
        return _pool_answer(request, round_, change)


class RoundPoolRemove(AdminApi):
    """Take an annotator out of the pool: their done work stays, their pending work moves to
    the others (items nobody eligible can take are left with fewer annotators)."""

    @extend_schema(
        request=None,
        responses={
            200: PoolChangeOut, 401: NO_CREDENTIALS, 403: NOT_ADMIN,
            404: OpenApiResponse(description="no such round or user"),
            409: OpenApiResponse(description="not in the pool"),
        },
    )  # fmt: skip
    def delete(self, request: Request, pk: int, user: str) -> Response:
        round_ = _round(pk)
        found = User.objects.filter(username=user).first()
        if found is None and user.isascii() and user.isdigit() and len(user) < 19:
            found = User.objects.filter(pk=int(user)).first()
        if found is None:
            return Response({"detail": f"no user {user!r}"}, status=status.HTTP_404_NOT_FOUND)
        try:
            change = round_annotator_remove(round_=round_, annotator=found)
        except RoundError as error:
            return _refuse(_conflict("annotator", str(error)))
        return _pool_answer(request, round_, change)
