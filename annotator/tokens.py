"""API tokens: one per user (DRF's ``authtoken``), created and revoked by its owner.

The key is shown once, in the answer that creates it; pages and the API afterwards say only
whether a token exists and since when. Creating again replaces the old key, so a leaked key is
rotated by creating a new one, and dropped for good by revoking it.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token


@transaction.atomic
def token_create(*, user: AbstractBaseUser) -> Token:
    """A new token for ``user``, replacing any earlier one (its key stops working at once)."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def token_revoke(*, user: AbstractBaseUser) -> bool:
    """Delete the user's token; False when they had none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def token_of(user: AbstractBaseUser) -> Token | None:
    """The user's token (to say whether one exists and since when; never to show its key)."""
    return Token.objects.filter(user=user).first()
