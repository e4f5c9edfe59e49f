"""Site-wide request handling that belongs to no app."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url


class LostPostNotice:
    """A form sent after the session ended (logged out in another tab, expired) is redirected to
    the login page like any request, and what it carried is lost: the login page says so, instead
    of the user finding later that their change was never saved."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            request.method == "POST"
            and response.status_code == 302
            and response.get("Location", "").startswith(resolve_url(settings.LOGIN_URL))
            and not request.user.is_authenticated
        ):
            messages.warning(
                request,
                "Your session had ended, so what you sent was not saved: log in, then send it again.",
            )
        return response
