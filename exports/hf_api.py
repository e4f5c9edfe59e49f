"""The API's download of an export's zipped Hugging Face datasets folder (admins only)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from exports.api import AnyAccept
from exports.hf_views import hf_file_response
from exports.models import Export
from jobs.api import DENIED, IsAdmin


class ExportHfDownload(APIView):
    """The export's Hugging Face datasets folder as a zip (``datasets.load_dataset`` reads the
    folder unzipped), the same response as the Exports page's link."""

    permission_classes = [IsAuthenticated & IsAdmin]
    content_negotiation_class = AnyAccept

    @extend_schema(
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            **DENIED,
            404: OpenApiResponse(description="no such export, or it has no datasets folder on the server"),
        }
    )
    def get(self, request: Request, pk: int):
        return hf_file_response(generics.get_object_or_404(Export, pk=pk))
