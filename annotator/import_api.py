"""Imports through the API, for admins: a file (and, in the same request, an item set and a round
over its items, so it is annotatable at once). The same services as the import page."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotator.admin_api import BAD, CONFLICT, NO_CREDENTIALS, NOT_ADMIN, AdminApi, Refused, _conflict
from annotator.api_fields import Text
from annotator.import_staging import MAX_UPLOAD
from annotator.imports import (
    FORMATS,
    ImportFileError,
    default_source,
    detect_format,
    items_import,
    source_items,
)
from annotator.item_set_api import ItemSetOut
from annotator.models import ItemSet, Round
from annotator.round_api import RoundOptionsIn, RoundOut, _create_round
from annotator.sampling import DrawError, item_set_of_ids


class ImportIn(RoundOptionsIn):
    file = serializers.FileField(help_text="crowd-enVent TSV, JSONL or CSV (UTF-8)")
    format = serializers.ChoiceField(
        choices=FORMATS, required=False, allow_blank=True, help_text="empty: from the file name"
    )
    source = Text(
        max_length=64, required=False, allow_blank=True,
        help_text="empty: crowd-enVent for a crowd-enVent TSV, the file's name for JSONL or CSV",
    )  # fmt: skip
    item_set = Text(
        max_length=100, required=False, allow_blank=True,
        help_text="make an item set of every row of the file, in file order, with this name",
    )  # fmt: skip
    tier = serializers.ChoiceField(choices=ItemSet.Tier.choices, default=ItemSet.Tier.OTHER)
    round = Text(
        max_length=100, required=False, allow_blank=True,
        help_text="create a round of this name over the item set (named after the round if not given)",
    )  # fmt: skip

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("annotators") and not data.get("round"):
            raise serializers.ValidationError(
                {"annotators": [_("annotators need a round (name it in round)")]}
            )
        return data


class ImportOut(serializers.Serializer):
    source = serializers.CharField()
    rows = serializers.IntegerField()
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    item_set = ItemSetOut(allow_null=True)
    round = RoundOut(allow_null=True)
    assignments = serializers.IntegerField(help_text="assignments the round was created with (0: no round)")


def _draw_refused(error: DrawError, *, name_field: str = "name") -> Refused:
    if error.taken:
        return _conflict(name_field, str(error))
    body = {"detail": str(error)}
    if error.field:
        body[error.field] = [str(error)]  # as every other 400 names its field
    return Refused(status.HTTP_400_BAD_REQUEST, body)


class ImportCreate(AdminApi):
    """One request from a file to annotatable work: import its rows, optionally make an item set
    of them and a round over it with its assignments, all in one transaction."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": ImportIn},
        responses={
            201: ImportOut, 400: BAD, 401: NO_CREDENTIALS, 403: NOT_ADMIN, 409: CONFLICT,
            415: OpenApiResponse(description="not multipart/form-data"),
        },
    )  # fmt: skip
    def post(self, request: Request) -> Response:
        form = ImportIn(data=request.data)
        form.is_valid(raise_exception=True)
        body = _import(form.validated_data, request)
        return Response(ImportOut(body, context={"request": request}).data, status=status.HTTP_201_CREATED)


def _import(data: dict[str, Any], request: Request) -> dict[str, Any]:
    upload = data["file"]
    if upload.size > MAX_UPLOAD:
        raise Refused(
            400, {"file": [_("the file is larger than %(mb)s MB") % {"mb": MAX_UPLOAD // 1024 // 1024}]}
        )
    try:
        fmt = data.get("format") or detect_format(upload.name or "")
    except ImportFileError as error:
        raise Refused(400, {"format": [str(p) for p in error.problems]}) from None
    source = (data.get("source") or "").strip() or default_source(fmt=fmt, filename=upload.name or "")
    round_name = (data.get("round") or "").strip()
    set_name = (data.get("item_set") or "").strip() or round_name
    # names first: a taken one refuses the request before the file is read
    if set_name and ItemSet.objects.filter(name=set_name).exists():
        raise _conflict("item_set", _("an item set named %(name)s already exists") % {"name": repr(set_name)})
    if round_name and Round.objects.filter(name=round_name).exists():
        raise _conflict("round", _("a round named %(name)s already exists") % {"name": repr(round_name)})
    with transaction.atomic():
        try:
            report = items_import(data=upload.read(), fmt=fmt, source=source)
        except ImportFileError as error:
            raise Refused(
                400,
                {
                    "file": [str(p) for p in error.problems],
                    "problems": [
                        {"line": p.line, "column": p.column, "message": p.message} for p in error.problems
                    ],
                },
            ) from None
        item_set = round_ = None
        if set_name:
            ids = dict(source_items(source, report.source_ids, "pk"))
            try:
                item_set = item_set_of_ids(
                    name=set_name,
                    item_ids=[ids[s] for s in report.source_ids],
                    tier=data["tier"],
                    created_by=request.user,
                    ids_checked=True,
                )
            except DrawError as error:
                raise _draw_refused(error, name_field="item_set") from None
        if round_name:
            try:
                round_ = _create_round(data, name=round_name, item_set=item_set)
            except Refused as error:
                if "name" in error.body:  # the request names the round in "round"
                    error.body["round"] = error.body.pop("name")
                raise
    return {
        "source": report.source, "rows": report.rows, "created": report.created,
        "unchanged": report.unchanged, "item_set": item_set, "round": round_,
        "assignments": round_.assignments.count() if round_ else 0,
    }  # fmt: skip
