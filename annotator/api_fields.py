"""Strict input fields for the API's request bodies: JSON's types as the schema states them. DRF's
own fields also take 12 for "12", 1 or "yes" for true and "12" for 12; a form post (not documented,
still read, its values all text) is read as DRF reads it."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers, status
from rest_framework.response import Response


def printable(text: str) -> str:
    """Text safe to echo in a JSON answer: a lone surrogate cannot be encoded as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ascii(text)[1:-1]
    return text


def _json_body(field: serializers.Field) -> bool:
    """Whether the request's body was a JSON object (a form's is a QueryDict). A field used on
    its own, outside a serializer, has no body to tell: it reads as DRF's does."""
    return type(getattr(field.root, "initial_data", None)) is dict


class Text(serializers.CharField):
    """A JSON string and nothing else; a lone surrogate is refused by name, since no database
    stores it."""

    default_error_messages = {"surrogate": _("contains a lone surrogate, not text")}

    def to_internal_value(self, data: Any) -> str:
        if _json_body(self) and not isinstance(data, str):
            self.fail("invalid")
        if isinstance(data, str) and printable(data) != data:
            self.fail("surrogate")
        return super().to_internal_value(data)


class Flag(serializers.BooleanField):
    """true or false, not "yes", 1 or "true"."""

    def to_internal_value(self, data: Any) -> bool:
        if _json_body(self) and not isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class Whole(serializers.IntegerField):
    """A JSON integer, not "12", 12.0 or true."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or (_json_body(self) and not isinstance(data, int)):
            self.fail("invalid")
        return super().to_internal_value(data)


def read_body(serializer_class: type[serializers.Serializer], request: Any) -> dict[str, Any] | Response:
    """A JSON body's values through ``serializer_class``, or the 400 Response naming each unknown
    or bad field (nothing is written before it): what every API view that reads a body uses."""
    if not isinstance(request.data, dict):
        return Response({"detail": _("expected a JSON object")}, status=status.HTTP_400_BAD_REQUEST)
    data = serializer_class(data=request.data)
    unknown = sorted(printable(str(k)) for k in set(request.data) - set(data.fields))
    if unknown:
        return Response({k: [_("unknown field")] for k in unknown}, status=status.HTTP_400_BAD_REQUEST)
    if not data.is_valid():
        return Response(data.errors, status=status.HTTP_400_BAD_REQUEST)
    return data.validated_data
