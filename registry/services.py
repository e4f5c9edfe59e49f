"""Writes to the registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from registry.models import NAME_PATTERN, NAME_RE, RegisteredParser


class RegistryError(ValueError):
    """A name or a model the registry cannot take; the message names the problem."""


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not NAME_RE.fullmatch(name):
        raise RegistryError(
            _("parser name %(name)s: use 1-63 lower-case letters, digits, '.', '_' or '-' (%(pattern)s)")
            % {"name": repr(name), "pattern": NAME_PATTERN}
        )
    return name


def validation_of(card: dict[str, Any]) -> tuple[float | None, int | None]:
    """(routed accuracy, texts) on the labelled texts a card says were held back from training
    (its calibration share); (None, None) when it held none back."""
    held = (card.get("sources") or {}).get("calibration") or {}
    texts, right = held.get("texts"), held.get("routed_right_forced")
    if not isinstance(texts, int) or not isinstance(right, int) or texts <= 0:
        return None, None
    return round(right / texts, 4), texts


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
    pairs = sorted(map(list, set(map(tuple, trained_on))))
    accuracy, held = validation_of(card)
    if backend not in RegisteredParser.Backend.values:
        raise RegistryError(f"backend {backend!r}: one of {', '.join(RegisteredParser.Backend.values)}")
    other = (
        RegisteredParser.objects.filter(name=name).exclude(backend=backend).values_list("backend", flat=True)
    )
    if other.exists():
        raise RegistryError(
            f"parser name {name!r} is taken by {other.first()} parsers; a {backend} parser needs another name"
        )
    for _attempt in range(5):
        top = RegisteredParser.objects.filter(name=name).aggregate(v=Max("version"))["v"] or 0
        try:
            with transaction.atomic():
                return RegisteredParser.objects.create(
                    name=name, version=top + 1, backend=backend, card=card,
                    folder=str(Path(folder).resolve()),
                    trained_on=pairs, trained_count=len(pairs), job_id=job_id,
                    validation_accuracy=accuracy, validation_texts=held,
                    description=description[:300],
                    created_by=user if getattr(user, "pk", None) else None,
                )  # fmt: skip
        except IntegrityError:
            continue
    raise RegistryError(f"parser {name}: could not take a version number (too many registrations at once)")
