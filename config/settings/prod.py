"""Production: every secret from the environment, no debug, behind a TLS proxy.

Run it with `manage.py serve` (gunicorn + a Celery worker, docs/deploy.md). Static files are served
by whitenoise from STATIC_ROOT, filled by `collectstatic` (serve runs it). PostgreSQL connections
come from a bounded psycopg pool per process, so the web workers and the job worker together hold
at most (web workers + 1) x NSM_DB_POOL_MAX connections."""

from config.env import ConfigError, check_secret_key, env_bool, env_int, env_list, env_str, postgres_pool
from config.log import stderr_logging
from config.settings.base import *  # noqa: F403

DEBUG = False
SECRET_KEY = check_secret_key(env_str("SECRET_KEY"))
# No default: a server that answers to no host of its own is a misconfiguration, named here.
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    raise ConfigError("ALLOWED_HOSTS must be set to the host names the site is served under")

# Behind a TLS proxy that sets X-Forwarded-Proto (and strips it from what clients send).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
for origin in CSRF_TRUSTED_ORIGINS:
    if not origin.startswith(("https://", "http://")):
        raise ConfigError(
            f"CSRF_TRUSTED_ORIGINS: {origin!r} must start with https:// (e.g. https://{origin})"
        )
# On by default; SECURE_SSL_REDIRECT=0 serves plain HTTP (local testing without a proxy).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True

# Static files: whitenoise right after the security middleware, hashed names with far-future
# cache headers from the manifest storage.
MIDDLEWARE = [*MIDDLEWARE]  # noqa: F405
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "whitenoise.middleware.WhiteNoiseMiddleware",
)
STATIC_ROOT = BASE_DIR / env_str("NSM_STATIC_ROOT", str(STATIC_ROOT))  # noqa: F405  relative: to the checkout
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# PostgreSQL: a bounded pool per process instead of a persistent connection per thread (the
# development server once held 94 of PostgreSQL's 100 connections under load); config.env.
DATABASES["default"] = postgres_pool(DATABASES["default"])  # noqa: F405

# Errors and warnings to stderr, where gunicorn and the process manager collect them (Django's
# default sends them nowhere with DEBUG off but to ADMINS by mail); a refused page in one line.
LOGGING = stderr_logging(env_str("NSM_LOG_LEVEL", "INFO"))

# The API answers JSON only: DRF's browsable HTML pages (forms that post to every endpoint) are for
# development; /api/docs/ documents the API in production.
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]}  # noqa: F405
