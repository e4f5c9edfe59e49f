"""Versions of a round's submitted work, for readers that cache what they compute from it (the
agreement pages). Writers call ``round_changed``; readers key their caches on ``round_version``."""

from __future__ import annotations

from collections.abc import Callable

from django.core.cache import cache
from django.db import transaction


def _key(round_id: int) -> str:
    return f"nsm:round-version:{round_id}"


def round_changed(round_id: int) -> None:
    """Forget the version now and again after commit, so no reader keeps a version computed
    between the write and its commit."""
    cache.delete(_key(round_id))
    transaction.on_commit(lambda: cache.delete(_key(round_id)))


def round_version(round_id: int, compute: Callable[[int], str]) -> str:
    version = cache.get(_key(round_id))
    if version is None:
        version = compute(round_id)
        cache.set(_key(round_id), version, timeout=None)
    return version
