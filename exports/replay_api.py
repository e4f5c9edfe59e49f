"""The replay in the API (admins only): ``POST /api/exports/replay/`` with an uploaded archive
(multipart, field ``archive``), ``POST /api/exports/<id>/replay/`` for a stored export. Both
answer the result: identical or not, both sha256s, and the differences by item, slot and field
(the first 200; all are counted). A file that is not an EmoExpl archive, or cannot be dated, is a
400 naming the problem. The upload is streamed to a temporary file, never held in memory."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from exports.models import Export
from exports.replay import replay_archive, replay_stored
from jobs.api import BAD, DENIED, IsAdmin


class ReplayIn(serializers.Serializer):
    archive = serializers.FileField(help_text="the EmoExpl archive (.zip) an export wrote")


class DifferenceOut(serializers.Serializer):
    item = serializers.CharField(
        help_text="the record's id (source:source_id); empty for the archive's other parts"
    )
    construal = serializers.IntegerField(allow_null=True, help_text="the construal's index; null: the item's")
    slot = serializers.CharField(help_text="the slot; empty when the difference is not one slot's")
    field = serializers.CharField(
        help_text="what differs: explication, provenance, routing.label, lines, ..."
    )
    archive = serializers.JSONField(allow_null=True, help_text="the published value (null: unresolved)")
    replay = serializers.JSONField(allow_null=True, help_text="the rebuilt value (null: unresolved)")


class ReplayOut(serializers.Serializer):
    archive = serializers.CharField(help_text="the archive's file name")
    identical = serializers.BooleanField(help_text="the rebuilt archive is byte for byte the given one")
    archive_sha256 = serializers.CharField()
    replay_sha256 = serializers.CharField()
    records = serializers.IntegerField(help_text="records in the archive")
    replayed = serializers.IntegerField(help_text="records rebuilt from the history")
    differing_records = serializers.IntegerField()
    differences_total = serializers.IntegerField()
    differences = DifferenceOut(many=True, help_text="the first 200 differences")
    notes = serializers.ListField(child=serializers.CharField())
    as_of = serializers.DictField(help_text="the moment rebuilt: the recipe's as_of")
    recipe = serializers.BooleanField(help_text="the archive carries a recipe")


_ANSWERS = {200: ReplayOut, **BAD, **DENIED}


class ReplayUpload(APIView):
    """Replay an uploaded EmoExpl archive against this database's history."""

    permission_classes = [IsAuthenticated & IsAdmin]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="exports_replay_upload",
        request={"multipart/form-data": ReplayIn},
        responses={**_ANSWERS, 415: OpenApiResponse(description="not multipart/form-data")},
    )
    def post(self, request: Request) -> Response:
        data = ReplayIn(data=request.data)
        if not data.is_valid():
            return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
        upload = data.validated_data["archive"]
        name = Path(upload.name or "archive.zip").name
        # ReplayInputError: 400 naming the archive (its api_body)
        if hasattr(upload, "temporary_file_path"):  # a large upload is on disk already
            result = replay_archive(Path(upload.temporary_file_path()), label=name)
        else:
            with tempfile.NamedTemporaryFile(suffix=".zip") as copy:
                for chunk in upload.chunks():
                    copy.write(chunk)
                copy.flush()
                result = replay_archive(Path(copy.name), label=name)
        return Response(ReplayOut(result.as_dict()).data)


class ExportReplay(APIView):
    """Replay a stored export (its file on the server) against this database's history."""

    permission_classes = [IsAuthenticated & IsAdmin]

    @extend_schema(
        operation_id="exports_replay",
        request=None,
        responses={**_ANSWERS, 404: OpenApiResponse(description="no such export, or its file is gone")},
    )
    def post(self, request: Request, pk: int) -> Response:
        export = generics.get_object_or_404(Export, pk=pk)
        if export.kind == Export.Kind.EMOEXPL and not export.path.is_file():  # as its download answers
            gone = _("%(file)s is no longer on the server; export again to make it") % {
                "file": export.filename
            }
            return Response({"detail": gone}, status=status.HTTP_404_NOT_FOUND)
        result = replay_stored(export)  # ReplayInputError: 400
        return Response(ReplayOut(result.as_dict()).data)
