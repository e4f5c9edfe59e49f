"""The three roles, kept as auth groups so that admins manage them in the Django admin."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

ANNOTATOR = "annotator"
ADJUDICATOR = "adjudicator"
ADMIN = "admin"
ROLES: tuple[str, ...] = (ANNOTATOR, ADJUDICATOR, ADMIN)


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The roles of a user; a superuser is an admin whatever their groups."""
    if not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_nsm_roles", None)
    if cached is None:
        names = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        if user.is_superuser:
            names.add(ADMIN)
        cached = frozenset(names)
        user._nsm_roles = cached
    return cached


def has_role(user: AbstractBaseUser | AnonymousUser, role: str) -> bool:
    return role in user_roles(user)
