"""The API's refusals as exceptions: one class per status a script handles differently, each with
the status, the JSON body the API answered and the errors it names by field (docs/api.md, Errors)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

#: an error's message says this much of what the body says
MESSAGE_CHARS = 500


class ApiError(Exception):
    """An answer of 400 or more. ``body`` is its JSON (or its text when it is none); ``detail`` the
    API's message for the request as a whole; ``errors`` the rest of a JSON object body: for a 400,
    each field at fault with its messages (``{"name": ["..."]}``; an annotation's refused slot as
    ``{"message", "allowed"}``; an import's ``file`` and ``problems``)."""

    status: int = 0

    def __init__(self, response: httpx.Response, body: Any):
        self.response = response
        self.status = response.status_code
        self.body = body
        self.detail: str | None = None
        self.errors: dict[str, Any] = {}
        if isinstance(body, dict):
            detail = body.get("detail")
            self.detail = detail if isinstance(detail, str) else None
            self.errors = {key: value for key, value in body.items() if key != "detail"}
        super().__init__(self._message())

    def _message(self) -> str:
        request = self.response.request
        said = self.detail or "; ".join(f"{field}: {_text(value)}" for field, value in self.errors.items())
        if not said and isinstance(self.body, str):
            said = self.body.strip()[:200]
        if len(said) > MESSAGE_CHARS:  # the whole of it is in ``errors``
            said = said[: MESSAGE_CHARS - 1] + "…"
        return f"{self.status} {request.method} {request.url.path}: {said}".rstrip(": ")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    if isinstance(value, dict):
        if "message" in value:
            return str(value["message"])
        return "; ".join(f"{k}: {_text(v)}" for k, v in value.items())
    return str(value)


class BadRequest(ApiError):
    """400: bad input; ``errors`` names each field at fault. Nothing was written."""

    status = 400


class Unauthorized(ApiError):
    """401: no token, or a wrong, revoked or deactivated one (or a wrong password at /api/token/)."""

    status = 401


class Forbidden(ApiError):
    """403: the user has not the role the operation asks for."""

    status = 403


class NotFound(ApiError):
    """404: no such object (or not yours), or a page past the last."""

    status = 404


class Conflict(ApiError):
    """409: the request conflicts with what exists (a taken name, a stale save, a job already
    running); the body may say more (the current ``version`` of a stale save)."""

    status = 409


class ServiceUnavailable(ApiError):
    """503 after the client's retries: the database or the job queue cannot be reached.
    ``retry_after`` is the wait the server asked for (seconds); ``job`` the id of a job the server
    kept (failed) when the queue was down: resume it (``Client.start_job`` does)."""

    status = 503

    def __init__(self, response: httpx.Response, body: Any):
        super().__init__(response, body)
        self.retry_after = retry_after(response)
        job = body.get("job") if isinstance(body, dict) else None
        self.job: int | None = job if isinstance(job, int) else None


ERRORS: dict[int, type[ApiError]] = {
    cls.status: cls for cls in (BadRequest, Unauthorized, Forbidden, NotFound, Conflict, ServiceUnavailable)
}


def error_for(response: httpx.Response) -> ApiError:
    """The exception for an answer of 400 or more, its body read as JSON when it is JSON."""
    body: Any
    try:
        body = response.json() if "json" in response.headers.get("content-type", "") else response.text
    except ValueError:
        body = response.text
    return ERRORS.get(response.status_code, ApiError)(response, body)


def retry_after(response: httpx.Response) -> float | None:
    """The Retry-After header in seconds (a number, or an HTTP date), None when absent or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class JobFailed(Exception):
    """A job ended failed or cancelled (``Client.wait_for_job``); ``job`` is its last state."""

    def __init__(self, job: Any):
        self.job = job
        super().__init__(f"job #{job.get('id')} {job.get('status')}: {job.get('error') or ''}".rstrip(": "))
