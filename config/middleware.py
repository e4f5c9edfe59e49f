"""Site-wide request handling that belongs to no app."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils.html import format_html
from django.utils.translation import gettext as _


class LostPostNotice:
    """A form sent after the session ended (logged out in another tab, expired) is redirected to
    the login page like any request, and what it carried is lost: the login page says so, instead
    of the user finding later that their change was never saved. A part of a page fetched by htmx
    gets one line saying the session ended instead of the login page inside it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        location = urlsplit(response.get("Location", "")) if response.status_code == 302 else None
        # refused for want of a login: the login page is asked to come back to this very request
        # (a logout, or the language switch on the login page, also lands there, losing nothing)
        to_login = (
            location is not None
            and location.path == resolve_url(settings.LOGIN_URL)
            and parse_qs(location.query).get(REDIRECT_FIELD_NAME) == [request.get_full_path()]
            and not request.user.is_authenticated
        )
        if to_login and request.headers.get("HX-Request") == "true":
            # a part of a page (a live preview, a progress poll) would swap the whole login page
            # in; it shows this line instead, and the page around it keeps what was typed
            return HttpResponse(
                format_html(
                    '<p class="error" role="alert" id="session-ended">{}</p>',
                    _(
                        "Your session has ended: log in again (in another tab, to keep this page), then "
                        "reload this page."
                    ),
                )
            )
        if to_login and request.method == "POST":
            messages.warning(
                request,
                _("Your session had ended, so what you sent was not saved: log in, then send it again."),
            )
        return response


class ContentSecurityPolicy(CSPMiddleware):
    """django-csp's middleware, with the settings' policy built once a process: django-csp builds
    the header again for every response, from every directive it knows (about thirty, most unset),
    which took about 85 us a response here, against 15 to 25 us for this (in-process, alternating
    runs, 2026-11-28; a fetch takes about 4 ms of CPU on this machine). A response
    whose policy a view changed (django-csp's decorators) or that carries a nonce is left to
    django-csp, as is a debug page; the others get the header django-csp would give them, where it
    would (tests/app/test_content_security_policy.py compares the two)."""

    def process_response(self, request: HttpRequest, response: Any) -> Any:
        plain = getattr(request, "_csp_nonce", None) is None and not any(
            hasattr(response, name) for name in _VIEW_CHANGES
        )
        if not plain or (settings.DEBUG and response.status_code in (500, 404)):
            return super().process_response(request, response)
        for header, report_only in ((HEADER, False), (HEADER_REPORT_ONLY, True)):
            policy, excluded = _policy(report_only)
            if policy and header not in response and not request.path_info.startswith(excluded):
                response[header] = policy
        # as django-csp does once the header is written: a nonce asked for now could not be in it
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response


# what django-csp's decorators set on a response (csp_update, csp_replace, csp, csp_exempt)
_VIEW_CHANGES = tuple(
    f"_csp_{change}{ro}" for change in ("config", "update", "replace", "exempt") for ro in ("", "_ro")
)


@functools.cache
def _policy(report_only: bool) -> tuple[str, tuple[str, ...]]:
    """The settings' header, as django-csp builds it, and the URL prefixes it is not sent under."""
    setting = getattr(
        settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY" if report_only else "CONTENT_SECURITY_POLICY", None
    )
    excluded = tuple((setting or {}).get("EXCLUDE_URL_PREFIXES", None) or ())
    return build_policy(report_only=report_only), excluded


@receiver(setting_changed)
def _policy_changed(*, setting: str, **kwargs: Any) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _policy.cache_clear()
