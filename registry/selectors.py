"""Reads of the registry: a parser by name, what it was trained on."""

from __future__ import annotations

import re
from pathlib import Path

from django.db.models import F, QuerySet
from django.utils.translation import gettext as _

from annotator.filters import typed_id
from nsmcore.parsers import trained_item_ids
from registry.models import NAME_PATTERN, VERSION_MAX, RegisteredParser

SPEC_RE = re.compile(NAME_PATTERN + r"(@[0-9]*)?")


class UnknownParser(LookupError):
    """No registered parser answers to that name; the message lists the names there are."""


def parsers_list(*, backend: str = "") -> QuerySet[RegisteredParser]:
    found = RegisteredParser.objects.all()
    return found.filter(backend=backend) if backend else found


def best_parser() -> RegisteredParser | None:
    """The registered classifier parser a prefill uses when none is asked for: the highest routed
    accuracy on texts held back from its own training; parsers that held none back come after,
    newest first. None when none is registered."""
    return (
        RegisteredParser.objects.filter(backend=RegisteredParser.Backend.CLASSIFIER)
        .defer("card", "trained_on")
        .order_by(F("validation_accuracy").desc(nulls_last=True), "-created_at", "-pk")
        .first()
    )


def registered_line(limit: int = 12) -> str:
    """``registered: a@2, a@1, b@1`` (newest first within a name), for refusals."""
    rows = RegisteredParser.objects.order_by("name", "-version").values_list("name", "version")
    specs = [f"{name}@{version}" for name, version in rows]
    shown = ", ".join(specs[:limit])
    if len(specs) > limit:
        shown = _("%(shown)s and %(more)s more") % {"shown": shown, "more": len(specs) - limit}
    return _("registered: %(shown)s") % {"shown": shown or _("none yet (train one on the Jobs page)")}


def looks_like_spec(value: str) -> bool:
    """``NAME`` or ``NAME@VERSION`` in the registry's alphabet, not a path."""
    return bool(SPEC_RE.fullmatch(value.strip()))


def parser_get(spec: str) -> RegisteredParser:
    """``NAME@VERSION`` or ``NAME`` (its newest version); UnknownParser lists the registered ones."""
    name, at, version = spec.strip().partition("@")
    found = RegisteredParser.objects.filter(name=name)
    if at:
        number = typed_id(version, limit=VERSION_MAX)
        found = found.filter(version=number) if number is not None else found.none()
    parser = found.order_by("-version").first()
    if parser is None:
        raise UnknownParser(
            _("no registered parser %(spec)s; %(registered)s")
            % {"spec": repr(spec), "registered": registered_line()}
        )
    return parser


def parser_for_folder(folder: str) -> RegisteredParser | None:
    """The registered parser kept in ``folder`` (given as a path), if any."""
    resolved = str(Path(folder).expanduser().resolve())
    return RegisteredParser.objects.filter(folder__in={folder, resolved}).order_by("-version").first()


def is_spec(value: str) -> bool:
    """Whether ``value`` names a registered parser (not a path or a hub name)."""
    name, _at, version = value.strip().partition("@")
    if not name or "/" in name or (version and typed_id(version, limit=VERSION_MAX) is None):
        return False
    return RegisteredParser.objects.filter(name=name).exists()


def trained_ids(parser_name: str) -> frozenset[str] | frozenset[tuple[str, str]] | None:
    """What a parser (by the name its predictions carry) was trained on: a registered parser's
    (source, source_id) pairs, else the corpus ids its folder records
    (nsmcore.parsers.trained_item_ids); None when nothing is recorded."""
    backend, _colon, spec = parser_name.partition(":")
    if "@" in spec and backend in RegisteredParser.Backend.values:
        name, _at, version = spec.partition("@")
        number = typed_id(version, limit=VERSION_MAX)
        found = RegisteredParser.objects.filter(name=name, backend=backend, version=number or -1).first()
        if found is not None:
            return frozenset(tuple(pair) for pair in found.trained_on)
    return trained_item_ids(parser_name)
