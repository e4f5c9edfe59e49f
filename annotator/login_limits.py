"""Login throttling (django-axes): a password is checked only while neither the address it comes
from nor the account it names has failed too often lately, so a flood of wrong passwords costs a
lookup per attempt instead of a password hash (0.7 s of a web worker each, measured: six
wrong-password loops took other users' median from 39 ms to 1,248 ms before this; issue 24).

The settings (config/settings/base.py): NSM_LOGIN_FAILURES wrong passwords (default 5) from one
address, or at one account from anywhere, lock that address or account out for
NSM_LOGIN_LOCKOUT_MINUTES (default 15); a successful login resets its count. An admin lifts a
lockout at once with ``manage.py axes_reset_username NAME`` or ``axes_reset_ip ADDRESS``.

Behind a proxy every request comes from the proxy's address: NSM_PROXY_COUNT (default 0) says
how many proxies of yours append to X-Forwarded-For, and the client is the address just before
them (an address a client writes into the header itself is never trusted)."""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

API_PREFIX = "/api/"


def client_address(request: HttpRequest) -> str | None:
    """The address a lockout counts against (AXES_CLIENT_IP_CALLABLE); None when the request has
    none that reads as one (a login made in code, as tests do, has no connection)."""
    proxies = settings.NSM_PROXY_COUNT
    candidates = []
    if proxies:
        hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if h.strip()]
        if len(hops) >= proxies:
            candidates.append(hops[-proxies])
    candidates.append(request.META.get("REMOTE_ADDR", ""))
    for candidate in candidates:
        try:
            return str(ipaddress.ip_address(candidate))
        except ValueError:
            continue
    return None


def minutes() -> int:
    return int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)


def lockout_detail() -> str:
    """What a refused login is told: why, and for how long."""
    return _(
        "Too many failed logins from this address or for this account: logging in is refused for "
        "%(minutes)s minutes. An admin can lift it sooner."
    ) % {"minutes": minutes()}


def locked_out(
    request: HttpRequest, credentials: dict[str, Any] | None = None, *args: Any, **kwargs: Any
) -> HttpResponse:
    """The answer to a login refused by a lockout (AXES_LOCKOUT_CALLABLE): 429 with Retry-After,
    the login page saying why and for how long (no password was checked), JSON under /api/."""
    wait = minutes()
    detail = lockout_detail()
    if request.path.startswith(API_PREFIX):
        response: HttpResponse = JsonResponse({"detail": detail}, status=429)
    else:
        response = render(request, "registration/login.html", {"locked_out": detail}, status=429)
    response["Retry-After"] = str(wait * 60)
    return response
