"""An export's file as a download: the one response the Exports page and the API both give."""

from __future__ import annotations

from django.http import FileResponse, Http404
from django.utils.translation import gettext as _

from exports.models import Export

#: by the file's suffix; FileResponse would guess none for .jsonl
CONTENT_TYPES = {
    ".zip": "application/zip",
    ".jsonl": "application/jsonl; charset=utf-8",
    ".csv": "text/csv; charset=utf-8",
}


def export_file_response(export: Export) -> FileResponse:
    """The export's file as an attachment; 404 with a note when it is no longer on the server."""
    if not export.path.is_file():
        raise Http404(
            _("%(file)s is no longer on the server; export again to make it") % {"file": export.filename}
        )
    content_type = CONTENT_TYPES.get(export.path.suffix, "application/octet-stream")
    return FileResponse(
        export.path.open("rb"), as_attachment=True, filename=export.filename, content_type=content_type
    )
