"""A typed Python client for the nsm-audit API (docs/api.md, "The Python client"): plain Python over
httpx, no Django. Every operation of the API is a method of ``Client`` (generated from the OpenAPI
schema into nsmclient.api, one module per feature, with a TypedDict for each body and answer); the
common flows are in nsmclient.flows."""

from nsmclient.client import Client
from nsmclient.errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    JobFailed,
    NotFound,
    ServiceUnavailable,
    Unauthorized,
)

__all__ = [
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "JobFailed",
    "NotFound",
    "ServiceUnavailable",
    "Unauthorized",
]
