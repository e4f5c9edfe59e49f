"""The three roles, kept as auth groups so that admins manage them in the Django admin.

No role, no access: a signed-in user without any role (a new account, or one whose roles were
all taken away) reaches only the home page, which says so, and logging out (RoleRequired for the
pages, IsMember for the API); what they were assigned stays, unread and unchanged, until an admin
gives a role back."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.permissions import BasePermission

ANNOTATOR = "annotator"
ADJUDICATOR = "adjudicator"
ADMIN = "admin"
ROLES: tuple[str, ...] = (ANNOTATOR, ADJUDICATOR, ADMIN)


# how long a user's roles are kept in the cache; every change through the app, the admin or a
# command forgets them at once (annotator.auth.user_changed, on the groups' m2m_changed)
ROLES_SECONDS = 300


def roles_cache_key(user_id: object) -> str:
    return f"auth-roles:{user_id}"


def user_roles(user: AbstractBaseUser | AnonymousUser) -> frozenset[str]:
    """The roles of a user; a superuser is an admin whatever their groups. Read once per request
    object, from the cache before the database: every page and API request asks (RoleRequired,
    IsMember), and the groups' query was one of the few an API request made."""
    if not user.is_authenticated:
        return frozenset()
    cached = getattr(user, "_nsm_roles", None)
    if cached is None:
        key = roles_cache_key(user.pk)
        cached = cache.get(key)
        if cached is None:
            names = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
            if user.is_superuser:
                names.add(ADMIN)
            cached = frozenset(names)
            cache.set(key, cached, timeout=ROLES_SECONDS)
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
                raise PermissionDenied(_("this page is for: %(roles)s") % {"roles": ", ".join(roles)})
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


NO_ROLE = gettext_lazy("you have no role in this project, so only Home is open to you")


class IsMember(BasePermission):
    """The API's default permission (REST_FRAMEWORK): signed in, with at least one role."""

    message = NO_ROLE

    def has_permission(self, request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and user_roles(request.user))


# the pages a user without a role may still open: home (it tells them why), logging out, and their
# own password (changing it, or a reset link, reaches no project data)
OPEN_WITHOUT_ROLE = frozenset({
    "home", "logout", "login", "password_change", "password_change_done", "password_reset",
    "password_reset_done", "password_reset_confirm", "password_reset_complete",
    "oidc_authentication_init", "oidc_authentication_callback",  # logging in again (annotator.sso)
})  # fmt: skip


class RoleRequired:
    """Middleware: a signed-in user without a role gets 403 on every page but OPEN_WITHOUT_ROLE.
    The API (IsMember) and the Django admin (its own is_staff rule) decide for themselves."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        if request.path.startswith(("/api/", "/admin/")) or not request.user.is_authenticated:
            return None
        if request.resolver_match and request.resolver_match.url_name in OPEN_WITHOUT_ROLE:
            return None
        if user_roles(request.user):
            return None
        raise PermissionDenied(NO_ROLE)
