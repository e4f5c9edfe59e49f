"""API tokens: one per user, created and revoked by its owner.

The key is shown once, in the answer that creates it; only its SHA-256 digest is stored
(``ApiToken``), so the database, a backup of it or the admin gives no working key. Pages and the
API afterwards say only whether a token exists and since when. Creating again replaces the old
key, so a leaked key is rotated by creating a new one, and dropped for good by revoking it.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotator.models import ApiToken

KEY_BYTES = 20  # 40 hex characters, as DRF's keys (scripts and docs show keys of that shape)


def key_digest(key: str) -> str:
    """The stored form of a key: a key is 160 random bits, so a plain SHA-256 suffices (no salt
    or slow hash is needed against guessing, unlike a password)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class NewToken:
    """A token just made: the key, to show once, and when."""

    key: str
    created: datetime


@transaction.atomic
def token_create(*, user: AbstractBaseUser) -> NewToken:
    """A new token for ``user``, replacing any earlier one (its key stops working at once)."""
    ApiToken.objects.filter(user=user).delete()
    key = secrets.token_hex(KEY_BYTES)
    row = ApiToken.objects.create(user=user, digest=key_digest(key))
    return NewToken(key, row.created)


def token_revoke(*, user: AbstractBaseUser) -> bool:
    """Delete the user's token; False when they had none."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return bool(deleted)


def token_of(user: AbstractBaseUser) -> ApiToken | None:
    """The user's token (to say whether one exists and since when; it holds no key to show)."""
    return ApiToken.objects.filter(user=user).first()


def token_matches(token: ApiToken | None, key: str) -> bool:
    """Whether ``key`` is the key of ``token`` (compared in constant time)."""
    return token is not None and secrets.compare_digest(token.digest, key_digest(key))
