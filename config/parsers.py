"""The API's JSON body parser: DRF's, reading through nsmcore.jsonio, so a body nested too deeply
or holding a number too long is a 400 naming it (DRF's own raised a RecursionError: a 500)."""

from __future__ import annotations

import codecs
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from nsmcore.jsonio import loads


class SafeJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
            return loads(text)
        except ValueError as error:  # JSONTooComplex and JSONDecodeError alike
            raise ParseError(f"JSON parse error - {error}") from None
