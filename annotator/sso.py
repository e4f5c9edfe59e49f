"""Single sign-on through the institute's OpenID Connect provider (mozilla-django-oidc), beside the
local passwords. docs/sso.md says how to configure it for Keycloak, Azure AD or another provider.

On when NSM_OIDC_CLIENT_ID is set (config/settings/base.py adds SSOBackend then); a configuration
left half made stops ``manage.py check`` (and ``migrate``, ``runserver``) with what is missing.

The flow: the login page's button opens /oidc/authenticate/ (Authenticate), which sends the
browser to the provider with a state, a nonce and a PKCE challenge kept in the session; the
provider sends it back to /oidc/callback/ (Callback) with a code, which SSOBackend exchanges for an
ID token (its signature checked against the provider's keys, its nonce, audience, issuer and
expiry too) and an access token for the userinfo endpoint. Authenticate, Callback and SSOBackend
are in annotator.sso_flow, which is imported only where single sign-on is used (its libraries
weigh about 15 MiB); this module holds what every process needs: the settings, the roles, the
checks and the two URL views that hand over to the flow.

Who is who: the username is the claim NSM_OIDC_USERNAME_CLAIM (default ``preferred_username``),
else the email; an account of that name (in any case) is that person, and a new one is created
on the first login (unless NSM_OIDC_CREATE_USERS is off), without a usable local password.

Roles, on every login (sso_roles_apply): NSM_OIDC_ROLE_MAP (``value=role,...``; ``*=role`` gives
the role to everyone the provider lets in) maps the values of the claims NSM_OIDC_ROLE_CLAIM
(default ``groups,roles``; a dotted name reads inside an object: ``realm_access.roles``) to this
tool's roles. The roles the map names are managed by the provider: each is given when a value
maps to it and taken away when none does. Roles the map never names are left as an admin set them.
A user left without any role logs in but reaches nothing but Home (annotator.roles.RoleRequired).

Throttling: django-axes counts wrong passwords, and an SSO login sends none. The callback is
exempt from it (axes_exempt): a lockout of the address or the account for wrong local passwords
does not stop a login at the provider, which throttles its own passwords, and a refused callback
is not counted as a wrong password. A successful one forgets the failures counted against its own
account only, not those of its address (AxesHandler)."""

from __future__ import annotations

import importlib
import logging
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import Group
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from annotator.roles import ROLES

log = logging.getLogger(__name__)

CALLBACK = "oidc_authentication_callback"
CLOCK_SKEW_SECONDS = 60  # how far the provider's clock may be from ours (an ID token's exp and iat)
DISCOVERY_SECONDS = 3600  # the provider's discovery document, kept this long in the shared cache
# the provider's endpoints given one by one, each with the discovery document's name for it
ENDPOINTS = {
    "NSM_OIDC_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "NSM_OIDC_TOKEN_ENDPOINT": "token_endpoint",
    "NSM_OIDC_USERINFO_ENDPOINT": "userinfo_endpoint",
    "NSM_OIDC_JWKS_ENDPOINT": "jwks_uri",
    "NSM_OIDC_ISSUER": "issuer",
}
REQUIRED_ENDPOINTS = ("NSM_OIDC_AUTHORIZATION_ENDPOINT", "NSM_OIDC_TOKEN_ENDPOINT", "NSM_OIDC_ISSUER")
# the settings that only make sense with a client id: one of them set alone is a half-made setup
CONNECTION = ("NSM_OIDC_CLIENT_SECRET", "NSM_OIDC_DISCOVERY_URL", *ENDPOINTS)


class ProviderUnavailable(Exception):
    """The provider's discovery document could not be read."""


def configured() -> bool:
    return bool(getattr(settings, "NSM_OIDC_CLIENT_ID", ""))


def provider_name() -> str:
    return settings.NSM_OIDC_PROVIDER_NAME or _("single sign-on")


# -- the configuration ---------------------------------------------------------------------------


def parse_role_map(raw: str) -> tuple[tuple[str, str], ...]:
    """``"nsm-admins=admin,nsm-adjudicators=adjudicator,*=annotator"`` as (value, role) pairs; a
    value may map to several roles (``x=admin,x=adjudicator``). ValueError names a bad entry."""
    pairs = []
    for entry in (part.strip() for part in raw.split(",")):
        if not entry:
            continue
        value, equals, role = (side.strip() for side in entry.rpartition("="))
        if not equals or not value:
            raise ValueError(f"NSM_OIDC_ROLE_MAP entry {entry!r} is not value=role")
        if role not in ROLES:
            raise ValueError(
                f"NSM_OIDC_ROLE_MAP entry {entry!r}: {role!r} is no role; the roles are {', '.join(ROLES)}"
            )
        pairs.append((value, role))
    return tuple(pairs)


def role_map() -> tuple[tuple[str, str], ...]:
    try:
        return parse_role_map(settings.NSM_OIDC_ROLE_MAP)
    except ValueError as error:
        raise ImproperlyConfigured(str(error)) from None


def managed_roles() -> frozenset[str]:
    """The roles the provider decides: those the map names."""
    return frozenset(role for _value, role in role_map())


# -- claims and roles ----------------------------------------------------------------------------


def claim(claims: dict[str, Any], name: str) -> Any:
    """A claim by its name, or inside objects by a dotted path (``realm_access.roles``); a name
    that is itself a key wins (namespaced claims such as ``https://example.org/roles``)."""
    if name in claims:
        return claims[name]
    value: Any = claims
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def role_values(claims: dict[str, Any]) -> set[str]:
    """The values of the role claims: a list of strings, or one string."""
    found: set[str] = set()
    for name in settings.NSM_OIDC_ROLE_CLAIM:
        value = claim(claims, name)
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, list | tuple):
            found.update(v for v in value if isinstance(v, str))
    return found


def mapped_roles(claims: dict[str, Any]) -> frozenset[str]:
    values = role_values(claims)
    return frozenset(role for value, role in role_map() if value == "*" or value in values)


def claimed_username(claims: dict[str, Any]) -> str:
    for name in (settings.NSM_OIDC_USERNAME_CLAIM, "email"):
        value = claim(claims, name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


@transaction.atomic
def sso_roles_apply(*, user: Any, claims: dict[str, Any]) -> frozenset[str]:
    """Give the user the roles the claims map to and take away the other roles the map manages;
    roles it does not manage stay. Returns the user's roles now (a superuser is an admin anyway)."""
    managed = managed_roles()
    wanted = mapped_roles(claims)
    current = set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
    final = (current - managed) | wanted
    if final != current:
        user.groups.remove(*Group.objects.filter(name__in=current - final))
        user.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in sorted(final - current)))
        user.__dict__.pop("_nsm_roles", None)  # roles.user_roles caches on the instance
    return frozenset(final)


# -- the URLs -------------------------------------------------------------------------------------
# The flow (annotator.sso_flow) needs jwt, requests and cryptography, about 15 MiB: these two views
# import it when a sign-on starts or comes back, so that a process where single sign-on is off, or
# that has served none yet, never loads them.


def _flow():
    return importlib.import_module("annotator.sso_flow")


def authenticate(request: HttpRequest) -> HttpResponse:
    """/oidc/authenticate/: to the provider (404 while single sign-on is off)."""
    if not configured():
        raise Http404(_("single sign-on is not configured"))
    return _flow().Authenticate.as_view()(request)


def callback(request: HttpRequest) -> HttpResponse:
    """/oidc/callback/: back from the provider (404 while single sign-on is off)."""
    if not configured():
        raise Http404(_("single sign-on is not configured"))
    return _flow().Callback.as_view()(request)


def login_options(request: HttpRequest) -> dict[str, str]:
    """Context processor: the provider's name for the login page's button, empty while off."""
    return {"sso_provider": provider_name() if configured() else ""}


def axes_exempt(request: HttpRequest, credentials: dict[str, Any] | None = None) -> bool:
    """AXES_WHITELIST_CALLABLE: the OIDC callback, which sends no password, is neither refused
    by a lockout nor counted as a failure (the module's docstring says why)."""
    match = getattr(request, "resolver_match", None)
    return bool(match and match.url_name == CALLBACK and not (credentials or {}).get("password"))


class AxesHandler(AxesDatabaseHandler):
    """django-axes' database handler (AXES_HANDLER), except that a single sign-on login forgets
    only the failures counted against its own account, not those of the address it came from:
    otherwise anyone with an account at the provider could clear an address's lockout for
    passwords guessed at other accounts by logging in through the provider from it."""

    def reset_user_attempts(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        if not axes_exempt(request, credentials):
            return super().reset_user_attempts(request, credentials)
        count, _kinds = AccessAttempt.objects.filter(
            username=get_client_username(request, credentials)
        ).delete()
        return count


# -- the system check ----------------------------------------------------------------------------


DOC = "docs/sso.md"
BACKEND = "annotator.sso_flow.SSOBackend"


def _problems() -> list[tuple[int, str, str]]:
    """(number, message, hint) for each way the single sign-on settings are half made."""
    backend = BACKEND in settings.AUTHENTICATION_BACKENDS
    if not configured():
        stray = [name for name in CONNECTION if getattr(settings, name, "")]
        if stray:
            message = f"{', '.join(stray)} set but NSM_OIDC_CLIENT_ID is not, so single sign-on is off"
            hint = (
                f"set NSM_OIDC_CLIENT_ID to the client id the provider gave this site, or unset them ({DOC})"
            )
            return [(101, message, hint)]
        if backend:
            return [(102, f"{BACKEND} is in AUTHENTICATION_BACKENDS but NSM_OIDC_CLIENT_ID is not set", DOC)]
        return []
    problems = []
    if not settings.NSM_OIDC_CLIENT_SECRET:
        hint = f"set the client secret the provider gave this site ({DOC})"
        problems.append((103, "NSM_OIDC_CLIENT_ID is set but NSM_OIDC_CLIENT_SECRET is not", hint))
    if not settings.NSM_OIDC_DISCOVERY_URL:
        missing = [name for name in REQUIRED_ENDPOINTS if not getattr(settings, name, "")]
        if not settings.NSM_OIDC_SIGN_ALGO.startswith("HS") and not settings.NSM_OIDC_JWKS_ENDPOINT:
            missing.append("NSM_OIDC_JWKS_ENDPOINT")
        if missing:
            message = f"single sign-on has neither NSM_OIDC_DISCOVERY_URL nor {', '.join(missing)}"
            hint = (
                "set NSM_OIDC_DISCOVERY_URL to the provider's .well-known/openid-configuration address, "
                f"or each endpoint and the issuer ({DOC})"
            )
            problems.append((104, message, hint))
    for name in ("NSM_OIDC_DISCOVERY_URL", *ENDPOINTS):
        value = getattr(settings, name, "")
        if value and not value.startswith(("https://", "http://")):
            problems.append((105, f"{name}={value!r} is not an http(s) address", DOC))
    try:
        parse_role_map(settings.NSM_OIDC_ROLE_MAP)
    except ValueError as error:
        hint = f"write it as value=role,...; *=role gives the role to everyone ({DOC})"
        problems.append((106, str(error), hint))
    if "openid" not in settings.NSM_OIDC_SCOPES.split():
        problems.append((107, f"NSM_OIDC_SCOPES={settings.NSM_OIDC_SCOPES!r} lacks openid", DOC))
    if not backend:
        problems.append(
            (102, f"NSM_OIDC_CLIENT_ID is set but {BACKEND} is not in AUTHENTICATION_BACKENDS", DOC)
        )
    return problems


@checks.register(checks.Tags.security)
def check_sso(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Refuses single sign-on settings left half made (every command that checks, migrate too)."""
    return [
        checks.Error(message, hint=hint, id=f"annotator.E{number}") for number, message, hint in _problems()
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_sso_deploy(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``check --deploy``: the provider reached over plain HTTP (tokens and codes readable)."""
    if not configured():
        return []
    names = ("NSM_OIDC_DISCOVERY_URL", *ENDPOINTS)
    plain = [name for name in names if getattr(settings, name, "").startswith("http://")]
    if not plain:
        return []
    message = f"plain http:// in {', '.join(plain)}: codes and tokens cross the network readable"
    return [checks.Warning(message, hint="use https:// in production", id="annotator.W101")]
