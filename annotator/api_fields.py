"""Serializer fields the API's request bodies share."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class JsonBooleanField(serializers.BooleanField):
    """``true`` or ``false`` in a JSON body, as the schema says. DRF's field also takes 1, "yes",
    "on" and the like: a form's values, which a form post (not documented, still read) sends."""

    def to_internal_value(self, data: Any) -> bool:
        if type(self.root.initial_data) is dict and not isinstance(data, bool):  # a JSON object
            self.fail("invalid", input=data)
        return super().to_internal_value(data)
