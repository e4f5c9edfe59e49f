"""Single sign-on through the institute's OpenID Connect provider (mozilla-django-oidc), beside the
local passwords. docs/sso.md says how to configure it for Keycloak, Azure AD or another provider.

On when NSM_OIDC_CLIENT_ID is set (config/settings/base.py adds SSOBackend then); a configuration
left half made stops ``manage.py check`` (and ``migrate``, ``runserver``) with what is missing.

The flow: the login page's button opens /oidc/authenticate/ (Authenticate), which sends the
browser to the provider with a state, a nonce and a PKCE challenge kept in the session; the
provider sends it back to /oidc/callback/ (Callback) with a code, which SSOBackend exchanges for an
ID token (its signature checked against the provider's keys, its nonce, audience, issuer and
expiry too) and an access token for the userinfo endpoint.

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

import hashlib
import logging
from typing import Any

import jwt
import requests
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core import checks
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation, ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from annotator.auth import CachedModelBackend
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


def _discovery() -> dict[str, Any]:
    url = settings.NSM_OIDC_DISCOVERY_URL
    key = "sso-discovery:" + hashlib.sha256(url.encode()).hexdigest()[:16]
    document = cache.get(key)
    if document is None:
        try:
            response = requests.get(url, timeout=settings.NSM_OIDC_TIMEOUT)
            response.raise_for_status()
            document = response.json()
        except (requests.RequestException, ValueError) as error:
            raise ProviderUnavailable(f"discovery document {url}: {error}") from None
        if not isinstance(document, dict):
            raise ProviderUnavailable(f"discovery document {url}: not a JSON object")
        cache.set(key, document, timeout=DISCOVERY_SECONDS)
    return document


def endpoint(setting: str) -> str:
    """One of ENDPOINTS: as set, else from the discovery document, else empty."""
    value = getattr(settings, setting, "")
    if value or not settings.NSM_OIDC_DISCOVERY_URL:
        return value
    return str(_discovery().get(ENDPOINTS[setting]) or "")


def _library_settings() -> dict[str, Any]:
    """What mozilla-django-oidc reads, from this project's NSM_OIDC_* settings."""
    return {
        "OIDC_RP_CLIENT_ID": settings.NSM_OIDC_CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": settings.NSM_OIDC_CLIENT_SECRET,
        "OIDC_RP_SIGN_ALGO": settings.NSM_OIDC_SIGN_ALGO,
        "OIDC_RP_SCOPES": settings.NSM_OIDC_SCOPES,
        "OIDC_TIMEOUT": settings.NSM_OIDC_TIMEOUT,
        "OIDC_CREATE_USER": settings.NSM_OIDC_CREATE_USERS,
        "OIDC_USE_NONCE": True,
        "OIDC_USE_PKCE": True,
        "OIDC_ALLOW_UNSECURED_JWT": False,
    }


def library_setting(attr: str, *default: Any) -> Any:
    endpoints = {
        "OIDC_OP_AUTHORIZATION_ENDPOINT": "NSM_OIDC_AUTHORIZATION_ENDPOINT",
        "OIDC_OP_TOKEN_ENDPOINT": "NSM_OIDC_TOKEN_ENDPOINT",
        "OIDC_OP_USER_ENDPOINT": "NSM_OIDC_USERINFO_ENDPOINT",
        "OIDC_OP_JWKS_ENDPOINT": "NSM_OIDC_JWKS_ENDPOINT",
    }
    if attr in endpoints:
        return endpoint(endpoints[attr]) or None
    ours = _library_settings()
    if attr in ours:
        return ours[attr]
    return import_from_settings(attr, *default)


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


# -- the backend ---------------------------------------------------------------------------------


def _refuse(request: HttpRequest, message: str) -> None:
    """What the login page says when the callback fails (Callback.login_failure)."""
    request.sso_refusal = message


class SSOBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend on this project's settings: the provider's endpoints read
    only when a callback needs them (a password login never asks the provider anything), the ID
    token's audience and issuer checked as well as its signature and nonce, the claims of the ID
    token and of the userinfo endpoint together, users found by username, roles from the claims."""

    get_settings = staticmethod(library_setting)
    # the session's user from the cache, as for password logins (annotator.auth)
    get_user = CachedModelBackend.get_user

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.UserModel = get_user_model()

    OIDC_OP_TOKEN_ENDPOINT = property(lambda self: library_setting("OIDC_OP_TOKEN_ENDPOINT"))
    OIDC_OP_USER_ENDPOINT = property(lambda self: library_setting("OIDC_OP_USER_ENDPOINT"))
    OIDC_OP_JWKS_ENDPOINT = property(lambda self: library_setting("OIDC_OP_JWKS_ENDPOINT"))
    OIDC_RP_CLIENT_ID = property(lambda self: settings.NSM_OIDC_CLIENT_ID)
    OIDC_RP_CLIENT_SECRET = property(lambda self: settings.NSM_OIDC_CLIENT_SECRET)
    OIDC_RP_SIGN_ALGO = property(lambda self: settings.NSM_OIDC_SIGN_ALGO)
    OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        # only the callback (which passes the nonce) logs in here, never a password form whose
        # address happens to carry ?code=&state=
        if request is None or "nonce" not in kwargs or not configured():
            return None
        return super().authenticate(request, **kwargs)

    def _verify_jws(self, payload: str, key: Any) -> dict[str, Any]:
        """The library's check (the algorithm must be the configured one, the signature good),
        with CLOCK_SKEW_SECONDS of leeway for exp and iat: a provider whose clock runs a few
        seconds ahead issues tokens "not yet valid" here otherwise."""
        algorithm = jwt.get_unverified_header(payload).get("alg")
        if algorithm != settings.NSM_OIDC_SIGN_ALGO:
            raise SuspiciousOperation(f"token signed {algorithm!r}, not {settings.NSM_OIDC_SIGN_ALGO!r}")
        try:
            return jwt.decode(
                payload, key, algorithms=[algorithm], leeway=CLOCK_SKEW_SECONDS, options={"verify_aud": False}
            )
        except jwt.DecodeError:
            raise SuspiciousOperation("JWS token verification failed.") from None

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        payload = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # the ID token (a signed userinfo answer is checked by its signature)
            self._check_id_token(payload)
        return payload

    def _check_id_token(self, payload: dict[str, Any]) -> None:
        client = settings.NSM_OIDC_CLIENT_ID
        audience = payload.get("aud")
        audiences = [audience] if isinstance(audience, str) else list(audience or [])
        if client not in audiences:
            raise SuspiciousOperation(f"ID token audience {audience!r} is not this client ({client!r})")
        if len(audiences) > 1 and payload.get("azp") != client:
            party = payload.get("azp")
            raise SuspiciousOperation(f"ID token for several audiences, authorized party {party!r}")
        issuer = endpoint("NSM_OIDC_ISSUER")
        if payload.get("iss") != issuer:
            raise SuspiciousOperation(f"ID token issuer {payload.get('iss')!r} is not {issuer!r}")
        if "exp" not in payload or not payload.get("sub"):
            raise SuspiciousOperation("ID token without exp or sub")

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The ID token's claims, with the userinfo endpoint's over them where there is one (Azure
        AD puts groups and app roles in the ID token only); both must name the same subject."""
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            info = super().get_userinfo(access_token, id_token, payload)
            if not isinstance(info, dict) or info.get("sub") != payload.get("sub"):
                raise SuspiciousOperation("the userinfo answer is about another subject than the ID token")
            claims.update(info)
        return claims

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        username = claimed_username(claims)
        if not username:
            _refuse(
                self.request,
                _("The provider sent neither %(claim)s nor an email for this account.")
                % {"claim": settings.NSM_OIDC_USERNAME_CLAIM},
            )
            return None
        try:
            UnicodeUsernameValidator()(username)
            if len(username) > self.UserModel._meta.get_field("username").max_length:
                raise ValidationError("too long")
        except ValidationError:
            _refuse(self.request, _("%(name)s cannot be a username here.") % {"name": repr(username)})
            return None
        email = claims.get("email") if isinstance(claims.get("email"), str) else ""
        user = self.UserModel.objects.filter(username__iexact=username).order_by("pk").first()
        if user is None:
            if not settings.NSM_OIDC_CREATE_USERS:
                _refuse(
                    self.request,
                    _("There is no account named %(name)s here, and accounts are not created at the "
                      "first login: ask an admin.") % {"name": username},
                )  # fmt: skip
                return None
            try:
                with transaction.atomic():
                    user = self.UserModel.objects.create_user(username, email=email)  # no usable password
                log.info("single sign-on: created %s", username)
            except IntegrityError:  # the same person's first login in two tabs at once
                user = self.UserModel.objects.get(username__iexact=username)
        if not user.is_active:
            _refuse(self.request, _("Your account here has been deactivated: ask an admin."))
            return None
        self.update_user(user, claims)
        roles = sso_roles_apply(user=user, claims=claims)
        log.info("single sign-on: %s logged in, roles: %s", user.username, ", ".join(sorted(roles)) or "none")
        return user

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        changed = []
        for field, name in (("email", "email"), ("first_name", "given_name"), ("last_name", "family_name")):
            value = claims.get(name)
            if isinstance(value, str) and value and getattr(user, field) != value:
                setattr(user, field, value[: self.UserModel._meta.get_field(field).max_length])
                changed.append(field)
        if changed:
            user.save(update_fields=changed)
        return user


# -- the views -----------------------------------------------------------------------------------


def _login_page(request: HttpRequest, message: str, status: int) -> HttpResponse:
    return render(request, "registration/login.html", {"sso_error": message}, status=status)


UNREACHABLE = gettext_lazy(
    "The sign-on provider could not be reached. Try again later, or log in with a password."
)
PROVIDER_ERROR = gettext_lazy(
    "The sign-on provider answered with an error. Try again; if it happens again, tell an admin."
)
UNVERIFIED = gettext_lazy(
    "The sign-on could not be verified: the provider's answer is not valid for this site. Try again; "
    "if it happens again, tell an admin."
)


class Authenticate(OIDCAuthenticationRequestView):
    """/oidc/authenticate/: to the provider (404 while single sign-on is off)."""

    get_settings = staticmethod(library_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)  # the endpoints: in get

    def get(self, request: HttpRequest) -> HttpResponse:
        if not configured():
            raise Http404(_("single sign-on is not configured"))
        try:
            self.OIDC_OP_AUTH_ENDPOINT = library_setting("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except ProviderUnavailable as error:
            log.warning("single sign-on: %s", error)
            return _login_page(request, str(UNREACHABLE), 502)
        self.OIDC_RP_CLIENT_ID = settings.NSM_OIDC_CLIENT_ID
        return super().get(request)


class Callback(OIDCAuthenticationCallbackView):
    """/oidc/callback/: the provider sends the browser back here. A refusal is the login page
    with the reason (400), a provider that cannot be reached 502; nothing is logged in then."""

    get_settings = staticmethod(library_setting)

    def get(self, request: HttpRequest) -> HttpResponse:
        if not configured():
            raise Http404(_("single sign-on is not configured"))
        try:
            return super().get(request)
        except (SuspiciousOperation, jwt.InvalidTokenError, jwt.PyJWKError) as error:
            log.warning("single sign-on refused: %s", error)
            return _login_page(request, str(UNVERIFIED), 400)
        except requests.HTTPError as error:  # the provider answered, with an error (a wrong secret...)
            log.warning("single sign-on: the provider refused this site: %s", error)
            return _login_page(request, str(PROVIDER_ERROR), 502)
        except (requests.RequestException, ProviderUnavailable, ValueError) as error:
            log.warning("single sign-on: the provider failed: %s", error)
            return _login_page(request, str(UNREACHABLE), 502)

    def login_failure(self) -> HttpResponse:
        request = self.request
        message = getattr(request, "sso_refusal", "")
        if not message and request.GET.get("error"):
            error = request.GET["error"][:100]
            message = _("The provider refused the sign-on (%(error)s).") % {"error": error}
        if not message and "code" in request.GET:
            message = _("The sign-on was started in another browser or too long ago: try again.")
        if not message:
            message = str(UNVERIFIED)
        log.warning("single sign-on failed: %s", message)
        return _login_page(request, message, 400)


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
BACKEND = "annotator.sso.SSOBackend"


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
