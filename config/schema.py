"""The OpenAPI schema lists every status code an operation can answer with (issue 17), so that a
client, and the schema fuzzer in tests/integration/test_api_fuzz.py, can rely on it.

drf-spectacular documents only the success code of a view unless the view repeats its errors in
every ``extend_schema``. The error codes follow from what the view already declares, so this
AutoSchema adds them from there, once for every view:

- credentials: every operation whose permissions can refuse (no credentials), and every one with
  an authentication class that checks what it is sent (bad credentials: a token, not a session).
  DRF answers with 401 and a ``WWW-Authenticate`` header when the first authentication class names
  a header scheme (token authentication), and with 403 when it has none (session
  authentication): the schema says whichever the view's classes give, not the one we would like;
- 403: permission classes beyond ``IsAuthenticated`` (the roles), and unsafe methods under session
  authentication (the CSRF check);
- 404: a path with parameters (an unknown id), a paginated list (a page past the last), and a
  ``?format=`` DRF does not know;
- 400: a request body, or query filters (a FilterSet); 415: a body in a media type it does not read;
- 409 and anything else: only where a view declares it.

An explicit ``extend_schema`` response of a view wins over these defaults; where it gives only a
description, the shared error body is filled in so the body can still be checked. Error bodies
are DRF's: ``{"detail": ...}`` (``ErrorOut``), or for 400 the errors by field (``ValidationError``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.validators import ProhibitNullCharactersValidator, RegexValidator
from django.http import HttpRequest
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework import permissions, serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request


class ErrorOut(serializers.Serializer):
    """DRF's body for every error but a validation error; some views add facts beside it (the
    current version of a stale save, the id of the job already running)."""

    detail = serializers.CharField(help_text="what went wrong, for a person")


# DRF's shape for a validation error: each field with its list of messages (``non_field_errors``
# for the whole body), nested for nested fields; the annotation API gives each field an object
# (message and allowed values) instead; a request refused as a whole has a ``detail``.
VALIDATION_ERROR = {
    "type": "object",
    "description": "errors by field, or a detail for the whole request",
    "minProperties": 1,
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": {"anyOf": [{"type": "array"}, {"type": "object"}]},
}

UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
#: any text without a NUL character
NO_NUL = "^[^\\x00]*$"


def _leaves(permission: Any) -> Iterator[Any]:
    """The plain permissions inside DRF's composed ones (``IsAuthenticated & IsAdmin``)."""
    if isinstance(permission, (permissions.AND, permissions.OR)):
        yield from _leaves(permission.op1)
        yield from _leaves(permission.op2)
    elif isinstance(permission, permissions.NOT):
        yield from _leaves(permission.op1)
    else:
        yield permission


class AutoSchema(SpectacularAutoSchema):
    def _get_serializer_name(self, serializer: Any, direction: str, bypass_extensions: bool = False) -> str:
        """With request components split from responses (COMPONENT_SPLIT_REQUEST), the request's
        is named ``...Request``; a serializer named ``...In`` is only ever a request, and keeps
        the name clients know it by."""
        name = super()._get_serializer_name(serializer, direction, bypass_extensions)
        return name.removesuffix("Request") if name.endswith("InRequest") else name

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        """A request serializer that refuses a field it does not name (``refuses_unknown_fields``)
        says so: ``additionalProperties: false``."""
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and getattr(serializer, "refuses_unknown_fields", False):
            schema["additionalProperties"] = False
        return schema

    def _map_serializer_field(
        self, field: Any, direction: str, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        """A request's text field refuses a NUL character (DRF's ProhibitNullCharactersValidator,
        and PostgreSQL could not store one): its schema says so with a pattern, unless it has a
        pattern of its own (a RegexField's, which drf-spectacular adds later)."""
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        validators = [type(v) for v in field.validators]
        refuses_nul = ProhibitNullCharactersValidator in validators and RegexValidator not in validators
        if direction == "request" and refuses_nul and schema.get("type") == "string":
            schema = {"pattern": NO_NUL, **schema}
        return schema

    def _get_filter_parameters(self) -> list[dict[str, Any]]:
        """A list's filters (django-filter) read an empty value as no filter, and refuse a NUL
        character in text (Django's form fields): their schemas say both."""
        parameters = super()._get_filter_parameters()
        for parameter in parameters:
            schema = parameter.get("schema", {})
            if "enum" in schema and "" not in schema["enum"]:
                schema["enum"] = ["", *schema["enum"]]
            elif schema.get("type") == "integer":
                parameter["schema"] = {"oneOf": [schema, {"type": "string", "maxLength": 0}]}
            elif schema.get("type") == "string" and "pattern" not in schema:
                schema["pattern"] = NO_NUL
        return parameters

    def map_parsers(self) -> list[str]:
        """The media types a request body is documented in: JSON wherever a view reads it. Such
        views read a browser's form posts too (DRF's default parsers), but a form cannot carry a
        JSON body's null or nested values, so the schema names only JSON; an upload, which reads
        only multipart form data, names that."""
        media_types = super().map_parsers()
        return ["application/json"] if "application/json" in media_types else media_types

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response":  # a callback's request: not ours to answer
            return responses
        for code, reasons in self.error_codes().items():
            responses.setdefault(code, self._error_response(code, "; ".join(reasons)))
        for code, response in responses.items():
            if code >= "400" and "content" not in response:  # a description only: it wins, with the body
                responses[code] = {**self._error_response(code, ""), **response}
        return dict(sorted(responses.items()))

    def error_codes(self) -> dict[str, list[str]]:
        """Each error code this operation can answer with, and why."""
        codes: dict[str, list[str]] = {}
        leaves = [leaf for p in self.view.get_permissions() for leaf in _leaves(p)]
        authenticators = self.view.get_authenticators()
        # DRF's code for both: 401 when the first class names a WWW-Authenticate scheme, else 403
        unauthenticated = "401" if authenticators and self._authenticate_header() else "403"
        if authenticators and not all(isinstance(p, permissions.AllowAny) for p in leaves):
            codes.setdefault(unauthenticated, []).append(
                "no credentials"
                if unauthenticated == "401"
                else "no credentials (session authentication answers 403, not 401)"
            )
        if any(not isinstance(a, SessionAuthentication) for a in authenticators):
            # a token or password that is wrong is refused even where anyone may come in
            codes.setdefault(unauthenticated, []).append("bad credentials")
        if any(not isinstance(p, (permissions.IsAuthenticated, permissions.AllowAny)) for p in leaves):
            codes.setdefault("403", []).append(_permission_messages(leaves))
        if self.method in UNSAFE_METHODS and any(
            isinstance(a, SessionAuthentication) for a in authenticators
        ):
            codes.setdefault("403", []).append("signed in by session without the CSRF token")
        if "{" in self.path:
            codes.setdefault("404", []).append("no such object, or not yours")
        if self._is_list_view() and self._get_paginator():
            codes.setdefault("404", []).append("a page past the last")
        if self._get_format_parameters():
            codes.setdefault("404", []).append("an unknown format")
        if self.method in UNSAFE_METHODS and self.get_request_serializer() is not None:
            codes.setdefault("400", []).append("the body is not valid: errors by field")
            codes.setdefault("415", []).append("the body in a media type the operation does not read")
        if self._get_filter_parameters():
            codes.setdefault("400", []).append("a filter's value is not valid: errors by field")
        return codes

    def _authenticate_header(self) -> str | None:
        """What DRF puts in ``WWW-Authenticate`` for this view: the first authentication class's
        scheme, or None (then DRF answers 403 instead of 401)."""
        request = HttpRequest()
        request.method = self.method
        return self.view.get_authenticators()[0].authenticate_header(Request(request))

    def _error_response(self, code: str, description: str) -> dict[str, Any]:
        """The error body in each media type the view renders (DRF renders errors like the rest)."""
        if code == "400":
            component = ResolvedComponent(
                name="ValidationError",
                type=ResolvedComponent.SCHEMA,
                object="ValidationError",
                schema=VALIDATION_ERROR,
            )
            self.registry.register_on_missing(component)
            body: Any = component.ref
        else:
            body = ErrorOut
        response = self._get_response_for_code(body, code)
        response["description"] = description
        if code == "401":
            response["headers"] = {
                "WWW-Authenticate": {
                    "schema": {"type": "string"},
                    "required": True,
                    "description": "the scheme to authenticate with",
                }
            }
        return response


def _permission_messages(leaves: list[Any]) -> str:
    messages = [
        str(getattr(p, "message", ""))
        for p in leaves
        if not isinstance(p, (permissions.IsAuthenticated, permissions.AllowAny))
    ]
    return "; ".join(m for m in messages if m) or "not allowed for your role"
