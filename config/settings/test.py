"""The test suite. Fast password hashing; the database comes from DATABASE_URL as elsewhere."""

from config.env import env_str, filesystem_broker, parse_cache_url
from config.settings.base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Jobs run inline when a test starts one, unless the test runs a real worker (tests/integration,
# tests/browser), which switches this off on the Celery app.
CELERY_TASK_ALWAYS_EAGER = True
# Their own broker folder, so a test's messages never reach a `make run` worker (and back).
NSM_BROKER_DIR = VAR_DIR / "test-broker"  # noqa: F405
CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker(NSM_BROKER_DIR)
CELERY_TASK_EAGER_PROPAGATES = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not memory: a real worker process started by a browser test reads the same database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}  # noqa: F405
NSM_EXPORT_DIR = VAR_DIR / "test-exports"  # noqa: F405
# Their own cache folder, which each test empties (tests/conftest.py); a worker started by a test
# is pointed at it.
NSM_CACHE_URL = env_str("NSM_TEST_CACHE_URL", "") or f"file://{VAR_DIR / 'test-cache'}"  # noqa: F405
CACHES = {"default": parse_cache_url(NSM_CACHE_URL, base_dir=BASE_DIR)}  # noqa: F405
