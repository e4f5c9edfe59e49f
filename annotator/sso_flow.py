"""The single sign-on flow itself (annotator.sso says how it works and is configured): the
backend that exchanges the provider's code for tokens and checks them, and the two views the
browser passes through. It needs jwt, requests and mozilla-django-oidc's backend (cryptography
with them, about 15 MiB in each process), so it is imported only where single sign-on is on: by
AUTHENTICATION_BACKENDS when NSM_OIDC_CLIENT_ID is set, and by annotator.sso's two URL views
when a sign-on starts (issue 24's memory goal)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.cache import cache
from django.core.exceptions import SuspiciousOperation, ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from annotator.auth import CachedModelBackend
from annotator.sso import (
    CLOCK_SKEW_SECONDS,
    DISCOVERY_SECONDS,
    ENDPOINTS,
    ProviderUnavailable,
    claimed_username,
    configured,
    sso_roles_apply,
)

log = logging.getLogger("annotator.sso")


# -- the provider's endpoints --------------------------------------------------------------------


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
