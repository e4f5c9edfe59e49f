"""Reads of the registry: a parser by name, what it was trained on."""

from __future__ import annotations

from pathlib import Path

from django.db.models import QuerySet

from nsmcore.parsers import trained_item_ids
from registry.models import RegisteredParser


class UnknownParser(LookupError):
    """No registered parser answers to that name; the message lists the names there are."""


def parsers_list(*, backend: str = "") -> QuerySet[RegisteredParser]:
    found = RegisteredParser.objects.all()
    return found.filter(backend=backend) if backend else found


def parser_get(spec: str) -> RegisteredParser:
    """``NAME@VERSION`` or ``NAME`` (its newest version); UnknownParser names the known ones."""
    name, _, version = spec.strip().partition("@")
    found = RegisteredParser.objects.filter(name=name)
    if version:
        found = found.filter(version=int(version)) if version.isdigit() else found.none()
    parser = found.order_by("-version").first()
    if parser is None:
        known = ", ".join(sorted(set(RegisteredParser.objects.values_list("name", flat=True)))) or "none yet"
        raise UnknownParser(
            f"no registered parser {spec!r}; registered: {known} (train one on the Jobs page)"
        )
    return parser


def parser_for_folder(folder: str) -> RegisteredParser | None:
    """The registered parser kept in ``folder`` (given as a path), if any."""
    resolved = str(Path(folder).expanduser())
    return RegisteredParser.objects.filter(folder__in={folder, resolved}).order_by("-version").first()


def is_spec(value: str) -> bool:
    """Whether ``value`` names a registered parser (not a path or a hub name)."""
    name, _, version = value.strip().partition("@")
    if not name or "/" in name or (version and not version.isdigit()):
        return False
    return RegisteredParser.objects.filter(name=name).exists()


def trained_ids(parser_name: str) -> frozenset[str] | None:
    """The corpus ids a parser (by the name its predictions carry) was trained on: a registered
    parser's record, else what its folder records (nsmcore.parsers.trained_item_ids)."""
    backend, _, spec = parser_name.partition(":")
    if "@" in spec and backend in RegisteredParser.Backend.values:
        name, _, version = spec.partition("@")
        found = RegisteredParser.objects.filter(
            name=name, backend=backend, version=int(version) if version.isdigit() else -1
        ).first()
        if found is not None:
            return frozenset(found.trained_on)
    return trained_item_ids(parser_name)
