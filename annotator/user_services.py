"""Writes on accounts: create a user with roles, change their roles, deactivate or reactivate.

Roles are the auth groups of :mod:`annotator.roles`. An admin cannot take away their own admin
role or deactivate themselves, so that an instance never loses its last admin by a misclick.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, Group, User
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils.translation import gettext as _

from annotator.roles import ADMIN, ROLES

GENERATED_PASSWORD_BYTES = 12  # 16 URL-safe characters


class UserError(ValueError):
    """A refused account change; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


@dataclass(frozen=True)
class NewUser:
    user: User
    generated_password: str  # empty when the admin typed one; shown once, never stored


def _check_roles(roles: Iterable[str]) -> list[str]:
    roles = list(dict.fromkeys(roles))
    unknown = [r for r in roles if r not in ROLES]
    if unknown:
        raise UserError(
            "roles",
            _("unknown roles %(roles)s; allowed: %(allowed)s")
            % {"roles": ", ".join(unknown), "allowed": ", ".join(ROLES)},
        )
    return roles


def _set_groups(user: User, roles: list[str]) -> None:
    groups = [Group.objects.get_or_create(name=role)[0] for role in roles]
    user.groups.remove(*Group.objects.filter(name__in=ROLES).exclude(name__in=roles))
    user.groups.add(*groups)
    user.__dict__.pop("_nsm_roles", None)  # roles.user_roles caches on the instance


@transaction.atomic
def user_create(
    *,
    username: str,
    email: str = "",
    password: str = "",
    roles: Iterable[str] = (),
    is_staff: bool = False,
) -> NewUser:
    """A user with the given roles. With no password, a random one is generated and returned
    (to be shown once). The password must pass the configured validators."""
    username = username.strip()
    if not username:
        raise UserError("username", _("a username is required"))
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError as error:
        raise UserError("username", " ".join(error.messages)) from None
    if User.objects.filter(username__iexact=username).exists():
        raise UserError("username", _("a user named %(name)s already exists") % {"name": repr(username)})
    email = email.strip()
    if email:
        try:
            validate_email(email)
        except ValidationError:
            raise UserError(
                "email", _("%(email)s is not an email address") % {"email": repr(email)}
            ) from None
    roles = _check_roles(roles)
    generated = ""
    if not password:
        generated = password = secrets.token_urlsafe(GENERATED_PASSWORD_BYTES)
    candidate = User(username=username, email=email)
    try:
        validate_password(password, candidate)
    except ValidationError as error:
        raise UserError("password", " ".join(error.messages)) from None
    user = User.objects.create_user(username=username, email=email, password=password, is_staff=is_staff)
    _set_groups(user, roles)
    return NewUser(user, generated)


@transaction.atomic
def user_roles_set(*, user: User, roles: Iterable[str], by: AbstractBaseUser) -> User:
    """Replace the user's roles by ``roles``; an admin cannot drop their own admin role."""
    roles = _check_roles(roles)
    if user.pk == by.pk and ADMIN not in roles:
        raise UserError("roles", _("you cannot take away your own admin role; ask another admin"))
    _set_groups(user, roles)
    return user


def user_active_set(*, user: User, active: bool, by: AbstractBaseUser) -> User:
    """Deactivate (the user can no longer log in; their work is kept) or reactivate a user."""
    if user.pk == by.pk and not active:
        raise UserError("is_active", _("you cannot deactivate yourself"))
    user.is_active = active
    user.save(update_fields=["is_active"])  # post_save: the cached session user is forgotten
    return user
