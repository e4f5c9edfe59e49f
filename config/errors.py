"""Error answers that depend on who asks: under /api/ a client reads JSON, like every other error
the API gives (``{"detail": ...}``, config/schema.py documents it), not the site's HTML page."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import translation
from django.views import defaults
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

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


# After the database failed a request, this process answers 503 at once instead of letting each
# request wait out the connection pool's timeout again (NSM_DB_POOL_TIMEOUT, 10 s): at most every
# PROBE_SECONDS one request tries to connect directly, with a one-second timeout, and the first that
# gets through lifts the hold. So during an outage the first request of each web process waits the
# pool's timeout and the others answer at once; once the database is back, within PROBE_SECONDS.
PROBE_SECONDS = 0.5
RETRY_AFTER_SECONDS = 5
_outage = {"down": False, "probe_at": 0.0}
_outage_lock = threading.Lock()


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: JSON under /api/, a plain page elsewhere. Rendered without the
    request's context (no user, no session: both would ask the database that is down), in the
    language the request asks for (the switch's cookie, else the browser's: no database either),
    since DatabaseOutage answers before LocaleMiddleware has chosen it."""
    if request.path.startswith(API_PREFIX):
        response: HttpResponse = JsonResponse(
            {"detail": "the database is not answering; nothing was saved, try again in a few seconds"},
            status=503,
        )
    else:
        with translation.override(translation.get_language_from_request(request)):
            response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """An uncaught exception. The database not answering (PostgreSQL stopped, the pool's timeout
    passed, SQLite locked) is not the site's fault and passes: a 503 the client may retry, and a
    hold during which DatabaseOutage answers the same at once. Anything else: a 500, in JSON under
    /api/."""
    error = sys.exc_info()[1]
    if isinstance(error, (OperationalError, InterfaceError)):
        with _outage_lock:
            _outage["down"] = True
            _outage["probe_at"] = time.monotonic()  # the next request may try at once
        return database_unavailable(request)
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": "server error"}, status=500)
    return defaults.server_error(request)


def database_answers() -> bool:
    """Whether a new connection to the default database opens and answers within a second, made
    directly (not through the pool, whose wait is what the hold avoids)."""
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        if connection.vendor == "postgresql":
            import psycopg

            params = connection.get_connection_params()
            keep = ("dbname", "user", "password", "host", "port", "sslmode", "sslrootcert", "service")
            with psycopg.connect(**{k: params[k] for k in keep if params.get(k)}, connect_timeout=1) as probe:
                probe.execute("SELECT 1")
        else:
            with connection.get_new_connection(connection.get_connection_params()) as probe:
                probe.execute("SELECT 1")
            probe.close()
    except Exception:  # whatever stops a connection (refused, timeout, auth, locked) means not yet
        return False
    return True


class DatabaseOutage:
    """While a recent request found the database down (server_error), answers 503 at once, letting
    one request in PROBE_SECONDS try a direct connection that lifts the hold when it succeeds."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _outage["down"]:
            now = time.monotonic()
            with _outage_lock:
                probe = now >= _outage["probe_at"]
                if probe:
                    _outage["probe_at"] = now + PROBE_SECONDS
            if not (probe and database_answers()):
                return database_unavailable(request)
            _outage["down"] = False
        return self.get_response(request)


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's handler, and the one place where the apps' domain errors become answers: an error that
    says how the API answers it (``api_status``, and ``api_body()`` where it says more than
    ``{"detail": message}``: JobError 400, JobStateError 409, JobConflict 409 with the job,
    AdjudicationConflict 409, StaleSave 409 with the current version...) is answered so (the
    service that raised it wrote nothing: each writes in its own transaction); the views raise them
    instead of catching each one. Anything else is DRF's, or a 500."""
    response = exception_handler(exc, context)
    if response is not None:
        return response
    status = getattr(exc, "api_status", None)
    if not isinstance(status, int):
        return None
    body = exc.api_body() if hasattr(exc, "api_body") else {"detail": str(exc)}
    set_rollback()
    return Response(body, status=status)
