from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from adjudication.rule_revisions import urls as revision_urls
from annotator import sso

handler404 = "config.errors.not_found"  # JSON under /api/, the site's page elsewhere
handler400 = "config.errors.bad_request"  # likewise
handler500 = "config.errors.server_error"  # the database down: 503 with Retry-After

urlpatterns = [
    path("", include("annotator.urls")),
    path("", include("jobs.urls")),
    path("", include("predictions.urls")),
    path("", include("adjudication.urls")),
    path("", include("discussion.urls")),
    path("", include("profiles.urls")),
    path("", include("contrasts.urls")),
    path("", include("verification.urls")),
    path("", include("training.urls")),
    path("", include("learning.urls")),
    path("", include("quality.urls")),
    path("", include("exports.urls")),
    path("", include("webhooks.urls")),
    path("", include("registry.urls")),
    # the /rules/ space in one place: the active rule set (rules) and its revisions (adjudication)
    path("rules/", include("rules.urls")),
    path("rules/", include(revision_urls.urlpatterns)),
    path("api/rule-sets/", include(revision_urls.api)),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # the rest of Django's account views: changing one's password, and a reset link sent by mail
    # (NSM_EMAIL_BACKEND: the console in development; docs/admin.md)
    path("accounts/", include("django.contrib.auth.urls")),
    # single sign-on (annotator.sso), when configured; the names are mozilla-django-oidc's
    path("oidc/authenticate/", sso.authenticate, name="oidc_authentication_init"),
    path("oidc/callback/", sso.callback, name=sso.CALLBACK),
    # the language switch (set_language) and the scripts' strings in the page's language
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript_catalog"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # the split view serves Swagger UI's start-up script as a file: no inline script (the CSP)
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
    path("admin/", admin.site.urls),
    # browsers ask for /favicon.ico whatever the page says (downloads, JSON, the API browser);
    # lazy: with the manifest storage of production the hashed name exists only after collectstatic
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("favicon.svg"), permanent=True)),
]
