"""Error answers that depend on who asks: under /api/ a client reads JSON, like every other error
the API gives (``{"detail": ...}``, config/schema.py documents it), not the site's HTML page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A URL no route matches (``/api/items/-1/``: the id converter takes digits only) is a 404 in
    the API's own shape; elsewhere the site's page."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)
