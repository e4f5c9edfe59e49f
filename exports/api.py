"""REST API of the exports app (admins only): start an EmoExpl export or a raw-annotation export;
list exports and download their files."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from annotator.api_fields import Flag
from exports.downloads import CONTENT_TYPES, export_file_response
from exports.filters import ExportFilter
from exports.forms import ExportForm, RawExportForm
from exports.models import Export
from exports.recipe import recipe_of
from jobs.api import BAD, DENIED, NOT_FOUND, STARTED, FormStart, IsAdmin, absolute, form_in


def download_path(export: Export) -> str:
    return reverse("api_export_download", args=[export.pk])


ExportIn = form_in(
    ExportForm,
    # true when left out, even where the page starts the box unticked for want of a model: a
    # client that asks for nothing gets the verified export, or a 400 naming NSM_VERIFIER_MODEL
    verify=Flag(required=False, default=True, help_text="check every line with the NLI model (default true)"),
)
RawExportIn = form_in(RawExportForm)


class ExportOut(serializers.ModelSerializer):
    created_by = serializers.CharField(
        source="created_by.username", read_only=True, default=None, allow_null=True
    )
    scope = serializers.CharField(read_only=True)
    download = serializers.SerializerMethodField(help_text="absolute URL of the file's download")
    hf_download = serializers.SerializerMethodField(
        help_text="absolute URL of the zipped Hugging Face datasets folder; null when it has none"
    )

    class Meta:
        model = Export
        fields = [
            "id", "kind", "job", "round", "scope", "created_by", "created_at", "filename", "bytes", "sha256",
            "records", "lines", "verifier", "rule_set_version", "download", "hf_download",
        ]  # fmt: skip

    def get_download(self, export: Export) -> str:
        return absolute(self.context.get("request"), download_path(export))

    def get_hf_download(self, export: Export) -> str | None:
        if export.kind != Export.Kind.EMOEXPL or not export.hf_path.is_file():
            return None
        return absolute(self.context.get("request"), reverse("api_export_hf", args=[export.pk]))


class ExportDetailOut(ExportOut):
    recipe = serializers.SerializerMethodField(
        help_text="how the archive was made (the manifest's recipe: exports.recipe); null: none recorded"
    )
    replay = serializers.SerializerMethodField(help_text="POST here to replay it (absolute URL)")

    class Meta(ExportOut.Meta):
        fields = [*ExportOut.Meta.fields, "jsonl_sha256", "manifest", "recipe", "replay"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_recipe(self, export: Export) -> dict | None:
        return recipe_of(export)

    def get_replay(self, export: Export) -> str:
        return absolute(self.context.get("request"), reverse("api_export_replay", args=[export.pk]))


@extend_schema(request=ExportIn, responses=STARTED)
class ExportStart(FormStart):
    """An EmoExpl export of the whole gold corpus or one round's gold."""

    serializer_class = ExportIn


@extend_schema(request=RawExportIn, responses=STARTED)
class RawExportStart(FormStart):
    """Export one round's raw annotations (every revision of every annotator) as JSONL or CSV."""

    serializer_class = RawExportIn


_EXPORTS = Export.objects.select_related("round", "created_by")


@extend_schema(responses={200: ExportOut, **BAD, **DENIED, **NOT_FOUND})
class ExportList(generics.ListAPIView):
    """Completed exports of both kinds (EmoExpl gold archives, raw annotations), newest first;
    ?kind=emoexpl|raw, ?round= (a round's id)."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = ExportOut
    queryset = _EXPORTS
    filterset_class = ExportFilter


@extend_schema(responses={200: ExportDetailOut, **DENIED, **NOT_FOUND})
class ExportDetail(generics.RetrieveAPIView):
    """One export, with its manifest."""

    permission_classes = [IsAuthenticated & IsAdmin]
    serializer_class = ExportDetailOut
    queryset = _EXPORTS


class AnyAccept(BaseContentNegotiation):
    """The download answers its file whatever the client accepts (and an error as JSON), instead
    of a 406 to a client that asks for the file's own type."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportDownload(APIView):
    """The export's file, the same response as the Exports page's download."""

    permission_classes = [IsAuthenticated & IsAdmin]
    content_negotiation_class = AnyAccept

    @extend_schema(
        responses={
            **{(200, media.split(";")[0]): OpenApiTypes.BINARY for media in CONTENT_TYPES.values()},
            **DENIED,
            404: OpenApiResponse(description="no such export, or its file is no longer on the server"),
        }
    )
    def get(self, request: Request, pk: int):
        return export_file_response(generics.get_object_or_404(Export, pk=pk))
