"""Error answers that depend on who asks: under /api/ a client reads JSON, like every other error
the API gives (``{"detail": ...}``, config/schema.py documents it), not the site's HTML page."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults

API_PREFIX = "/api/"


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A URL no route matches (``/api/items/-1/``: the id converter takes digits only) is a 404 in
    the API's own shape; elsewhere the site's page."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refuses before any view (a body over DATA_UPLOAD_MAX_MEMORY_SIZE, a bad
    Host): under /api/ a JSON 400 that says why; elsewhere the site's page."""
    if not request.path.startswith(API_PREFIX):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 1024 / 1024
        detail = f"the request body is larger than {limit:g} MB (a file goes as multipart: /api/imports/)"
    else:
        detail = "bad request"
    return JsonResponse({"detail": detail}, status=400)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused for its CSRF token, most often because the session changed since the page
    was loaded (logged out and in again in another tab): a page of the site saying that nothing was
    saved and what to do, not Django's bare refusal. (The API's views answer CSRF in JSON.)"""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": f"CSRF Failed: {reason}"}, status=403)
    return render(request, "403_csrf.html", {"reason": reason}, status=403)
