"""Site-wide request handling that belongs to no app."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
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
        to_login = (
            response.status_code == 302
            and response.get("Location", "").startswith(resolve_url(settings.LOGIN_URL))
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
