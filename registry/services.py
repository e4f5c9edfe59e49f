"""Writes to the registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from registry.models import NAME_PATTERN, NAME_RE, RegisteredParser


class RegistryError(ValueError):
    """A name or a model the registry cannot take; the message names the problem."""


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not NAME_RE.fullmatch(name):
        raise RegistryError(
            f"parser name {name!r}: use 1-63 lower-case letters, digits, '.', '_' or '-' ({NAME_PATTERN})"
        )
    return name


def parser_register(
    *,
    name: str,
    backend: str,
    folder: str | Path,
    card: dict[str, Any],
    trained_on: list[Any],
    user: Any = None,
    job_id: int | None = None,
    description: str = "",
) -> RegisteredParser:
    """Register the next version of ``name``. A version number taken by a concurrent registration
    is retried with the next one."""
    name = check_name(name)
    if backend not in RegisteredParser.Backend.values:
        raise RegistryError(f"backend {backend!r}: one of {', '.join(RegisteredParser.Backend.values)}")
    for _ in range(5):
        top = RegisteredParser.objects.filter(name=name).aggregate(v=Max("version"))["v"] or 0
        try:
            with transaction.atomic():
                return RegisteredParser.objects.create(
                    name=name, version=top + 1, backend=backend, card=card,
                    folder=str(Path(folder).resolve()),
                    trained_on=sorted(map(list, set(map(tuple, trained_on)))), job_id=job_id,
                    description=description[:300],
                    created_by=user if getattr(user, "pk", None) else None,
                )  # fmt: skip
        except IntegrityError:
            continue
    raise RegistryError(f"parser {name}: could not take a version number (too many registrations at once)")
