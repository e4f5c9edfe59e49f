"""The zipped Hugging Face datasets folder of an export (exports.hf) as a download: the one response
the Exports page and the API (exports.hf_api) both give."""

from __future__ import annotations

from django.http import FileResponse, Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from annotator.roles import ADMIN, require_role
from exports.models import Export


def hf_file_response(export: Export) -> FileResponse:
    """The zip as an attachment; 404 with a note when the export has none (not asked for, or no
    longer on the server)."""
    path = export.hf_path
    if export.kind != Export.Kind.EMOEXPL or not path.is_file():
        raise Http404(
            _(
                "export %(id)s has no Hugging Face datasets folder on the server; export again with "
                "'Also write a Hugging Face datasets folder' ticked"
            )
            % {"id": export.pk}
        )
    return FileResponse(
        path.open("rb"), as_attachment=True, filename=path.name, content_type="application/zip"
    )


@require_role(ADMIN)
def export_hf_download(request: HttpRequest, export_id: int) -> FileResponse:
    return hf_file_response(get_object_or_404(Export, pk=export_id))
