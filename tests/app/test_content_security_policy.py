"""config.middleware.ContentSecurityPolicy: django-csp's header, with the settings' directives read
once a process. Every response gets the header django-csp's own middleware would give it: the
settings' policy, a view's changes (csp_update, csp_replace, csp_exempt), a nonce, and a policy
changed by the settings afterwards."""

import pytest
from csp.constants import NONCE
from csp.decorators import csp_exempt, csp_replace, csp_update
from csp.exceptions import CSPNonceError
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory

from config.middleware import ContentSecurityPolicy

HEADER = "Content-Security-Policy"


def plain(request):
    return HttpResponse("ok")


@csp_update({"img-src": ["https://example.org"]})
def updated(request):
    return HttpResponse("ok")


@csp_replace({"script-src": ["'self'", "https://cdn.example.org"]})
def replaced(request):
    return HttpResponse("ok")


@csp_exempt()
def exempt(request):
    return HttpResponse("ok")


def with_nonce(request):
    return HttpResponse(f"<script nonce='{request.csp_nonce}'></script>")


def own_header(request):
    response = HttpResponse("ok")
    response[HEADER] = "default-src 'none'"
    return response


def not_found(request):
    return HttpResponse("gone", status=404)


def headers(middleware_class, view, path="/"):
    """The policy headers ``view``'s response gets through ``middleware_class``, each as its set of
    directives (django-csp writes them in the order of a set, which changes between processes)."""
    request = RequestFactory().get(path)
    middleware = middleware_class(view)
    response = middleware(request)
    return {name: directives(response.get(name)) for name in (HEADER, f"{HEADER}-Report-Only")}


def directives(header: str | None) -> set[str] | None:
    return None if header is None else set(header.split("; "))


@pytest.mark.parametrize("view", [plain, updated, replaced, exempt, own_header, not_found])
@pytest.mark.parametrize("debug", [False, True])
def test_each_response_gets_django_csps_header(settings, view, debug):
    settings.DEBUG = debug
    assert headers(ContentSecurityPolicy, view) == headers(CSPMiddleware, view)


def test_no_header_under_an_excluded_prefix_as_django_csp(settings):
    settings.CONTENT_SECURITY_POLICY = {**settings.CONTENT_SECURITY_POLICY, "EXCLUDE_URL_PREFIXES": ["/raw/"]}
    for path in ("/raw/file", "/page/"):
        assert headers(ContentSecurityPolicy, plain, path) == headers(CSPMiddleware, plain, path)
    assert headers(ContentSecurityPolicy, plain, "/raw/file")[HEADER] is None


def test_a_nonce_asked_for_after_the_header_is_written_is_refused():
    request = RequestFactory().get("/")
    ContentSecurityPolicy(plain)(request)
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)


def test_the_views_changes_are_applied_to_the_settings_policy():
    policy = headers(ContentSecurityPolicy, updated)[HEADER]
    assert {"img-src 'self' data: https://example.org", "frame-ancestors 'none'"} <= policy
    assert headers(ContentSecurityPolicy, exempt)[HEADER] is None


def test_a_nonce_is_added_as_django_csp_adds_it(settings):
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"script-src": ["'self'", NONCE]}}
    request = RequestFactory().get("/")
    response = ContentSecurityPolicy(with_nonce)(request)
    nonce = response.content.decode().split("'")[1]
    assert directives(response[HEADER]) == {"default-src 'self'", f"script-src 'self' 'nonce-{nonce}'"}


def test_a_policy_changed_in_the_settings_is_read_again(settings):
    assert "frame-ancestors 'none'" in headers(ContentSecurityPolicy, plain)[HEADER]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"img-src": ["'self'"]}}
    assert headers(ContentSecurityPolicy, plain) == {
        HEADER: {"default-src 'none'"},
        f"{HEADER}-Report-Only": {"default-src 'self'", "img-src 'self'"},
    }
    assert headers(ContentSecurityPolicy, plain) == headers(CSPMiddleware, plain)
