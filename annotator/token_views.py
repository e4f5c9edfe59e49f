"""The API-token page (any logged-in user, for their own token) and the same through the API.

The page posts a Django form (CSRF-checked like every browser POST) and redirects to itself; the
new key is kept in the session until the page shows it, once. ``/api/token/`` lets a script get
its first key with the account's username and password (HTTP Basic, over TLS in production), a
browser session, or an existing token (which it then replaces)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from drf_spectacular.authentication import BasicScheme
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator.auth import HashedTokenAuthentication, ThrottledBasicAuthentication
from annotator.models import ApiToken
from annotator.roles import IsMember
from annotator.tokens import token_create, token_matches, token_of, token_revoke


class TokenForm(forms.Form):
    action = forms.ChoiceField(choices=[("create", "create"), ("revoke", "revoke")])


def _page(request: HttpRequest, *, key: str = "", note: str = "", status: int = 200) -> HttpResponse:
    token: ApiToken | None = token_of(request.user)
    context = {"token": token, "key": key if token_matches(token, key) else "", "note": note}
    return render(request, "annotator/tokens.html", context, status=status)


SHOW_ONCE = "nsm-token-created"  # the session key holding a new key until the page has shown it


@never_cache
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """GET: whether the user has a token, and a key just created, shown this once. POST
    action=create: a new key; action=revoke: the key stops working. A POST redirects to the page,
    so that reloading it neither shows the key again nor posts again (which would replace it)."""
    if request.method != "POST":
        return _page(request, key=request.session.pop(SHOW_ONCE, None) or "")
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, note=_("action: choose create or revoke"), status=400)
    if form.cleaned_data["action"] == "create":
        request.session[SHOW_ONCE] = token_create(user=request.user).key
    else:
        revoked = token_revoke(user=request.user)
        messages.success(request, _("Token revoked.") if revoked else _("You had no token."))
    return redirect("account_tokens")


TokenOut = inline_serializer(
    "TokenOut",
    {
        "key": serializers.CharField(help_text="send as 'Authorization: Token <key>'; shown only now"),
        "created": serializers.DateTimeField(),
        "username": serializers.CharField(),
    },
)
TokenState = inline_serializer(
    "TokenState",
    {"exists": serializers.BooleanField(), "created": serializers.DateTimeField(allow_null=True)},
)
NO_CREDENTIALS = OpenApiResponse(description="no or wrong credentials")


class ThrottledBasicScheme(BasicScheme):
    """The schema's basicAuth for ThrottledBasicAuthentication: drf-spectacular's own scheme matches
    DRF's class only, and warns of any other (manage.py check --deploy fails on the warning). Here,
    not beside the class: the schema's modules stay out of the worker, which imports annotator.auth."""

    target_class = "annotator.auth.ThrottledBasicAuthentication"


class TokenApi(APIView):
    """The requesting user's API token: GET says whether one exists (never its key), POST
    creates one (replacing any earlier: 201 with the key, shown once), DELETE revokes it."""

    # Basic first: a script without a key yet logs in with username and password, and an
    # anonymous request is answered 401 with a WWW-Authenticate challenge.
    authentication_classes = [ThrottledBasicAuthentication, SessionAuthentication, HashedTokenAuthentication]
    permission_classes = [IsMember]

    @extend_schema(request=None, responses={200: TokenState, 401: NO_CREDENTIALS})
    def get(self, request: Request) -> Response:
        token = token_of(request.user)
        return Response({"exists": token is not None, "created": token.created if token else None})

    @extend_schema(
        request=None,
        responses={
            201: TokenOut, 401: NO_CREDENTIALS, 403: NO_CREDENTIALS,
            429: OpenApiResponse(description="too many failed logins: refused for a while (Retry-After)"),
        },
    )  # fmt: skip
    def post(self, request: Request) -> Response:
        token = token_create(user=request.user)
        body = {"key": token.key, "created": token.created, "username": request.user.get_username()}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=None,
        responses={
            204: OpenApiResponse(description="revoked"),
            401: NO_CREDENTIALS,
            403: NO_CREDENTIALS,
            404: OpenApiResponse(description="you have no token"),
        },
    )
    def delete(self, request: Request) -> Response:
        if not token_revoke(user=request.user):
            return Response({"detail": _("you have no token")}, status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)
