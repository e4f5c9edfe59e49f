"""The three roles, kept as auth groups so that admins manage them in the Django admin."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

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


def require_role(*roles: str):
    """View decorator: log in first, then 403 unless the user has one of ``roles``."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not user_roles(request.user) & set(roles):
                raise PermissionDenied(f"this page is for: {', '.join(roles)}")
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def HasRole(*roles: str, message: str) -> type[BasePermission]:
    """The API's permission for users with one of ``roles`` (a superuser is an admin); a refusal
    says ``message``. One class per use, composable as DRF's are: ``IsAuthenticated & HasRole(...)``."""
    wanted = frozenset(roles)

    class _HasRole(BasePermission):
        def has_permission(self, request, view) -> bool:
            return bool(user_roles(request.user) & wanted)

    _HasRole.message = message
    _HasRole.__name__ = _HasRole.__qualname__ = f"HasRole({', '.join(roles)})"
    return _HasRole
