"""The user of a logged-in session, from the shared cache: Django's ModelBackend reads the user's
row on every request of a session; this backend keeps it in the cache (Django's, as the sessions
are) and forgets it whenever the row changes through the app, Django's admin or manage.py.

Measured (benchmarks/bench_load.py, PostgreSQL, 50 annotators without pause): the user's read was
about a sixth of the server's CPU per API request (py-spy, GIL samples of one worker).

A row changed by hand in the database, outside Django, is seen within USER_SECONDS."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.db import transaction
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.authentication import BasicAuthentication, TokenAuthentication
from rest_framework.exceptions import APIException, AuthenticationFailed

from annotator.login_limits import lockout_detail, minutes
from annotator.models import ApiToken
from annotator.roles import roles_cache_key, user_roles
from annotator.tokens import key_digest

USER_SECONDS = 300


def _key(user_id: Any) -> str:
    return f"auth-user:{user_id}"


class CachedModelBackend(ModelBackend):
    """ModelBackend (passwords, permissions, inactive users refused) whose ``get_user``, called
    for the session of every request, reads the user from the cache first."""

    def get_user(self, user_id: Any) -> Any:
        key = _key(user_id)
        user = cache.get(key)
        if user is None:
            try:
                user = get_user_model()._default_manager.get(pk=user_id)
            except get_user_model().DoesNotExist:
                return None
            user_roles(user)  # read now, kept on the cached user: one cache read a request, not two
            cache.set(key, user, timeout=USER_SECONDS)
        return user if self.user_can_authenticate(user) else None


def user_changed(user_id: Any) -> None:
    """Forget the cached user and roles now and again after commit, so that no request caches the
    row as it was between the write and its commit (as annotator.versions.round_changed)."""
    keys = [_key(user_id), roles_cache_key(user_id)]
    cache.delete_many(keys)
    transaction.on_commit(lambda: cache.delete_many(keys))


def forget_saved_user(sender: Any, instance: Any, **kwargs: Any) -> None:
    """post_save and post_delete of the user model."""
    user_changed(instance.pk)


def forget_regrouped_users(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any
) -> None:
    """m2m_changed of the users' groups, from either side (``user.groups.add``, or
    ``group.user_set.clear()`` in the admin): each user concerned has other roles now."""
    if not reverse:
        if action.startswith("post_"):
            user_changed(instance.pk)
        return
    if action == "pre_clear":
        pk_set = set(instance.user_set.values_list("pk", flat=True))
    elif not action.startswith("post_") or action == "post_clear":
        return
    for user_id in pk_set or ():
        user_changed(user_id)


class HashedTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, as DRF's TokenAuthentication, against the keys' digests
    (annotator.tokens): the key itself is stored nowhere."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        token = ApiToken.objects.select_related("user").filter(digest=key_digest(key)).first()
        if token is None:
            raise AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        return token.user, token


class LockedOut(APIException):
    """A login refused by a lockout (django-axes), before any password was checked."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS

    def __init__(self) -> None:
        super().__init__(lockout_detail())
        self.wait = minutes() * 60  # DRF's handler writes it as Retry-After


class ThrottledBasicAuthentication(BasicAuthentication):
    """DRF's Basic authentication (the token endpoint's, for a script with no key yet), answering a
    lockout as the login page does: 429 with Retry-After. django-axes marks the request it refuses,
    but DRF's would otherwise turn the refusal into a 401 "Invalid username/password", the right
    password included, and axes' middleware never sees DRF's request."""

    def authenticate_credentials(self, userid: str, password: str, request: Any = None) -> Any:
        try:
            return super().authenticate_credentials(userid, password, request)
        except AuthenticationFailed:
            if request is not None and getattr(request, "axes_locked_out", False):
                raise LockedOut() from None
            raise
