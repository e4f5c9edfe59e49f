"""The test suite. Fast password hashing; the database comes from DATABASE_URL as elsewhere.

Each run of the suite has its own places (database, broker folder, export folder, cache), named
by ``NSM_TEST_RUN`` (set here once per run and inherited by the worker processes the tests start)
and, inside it, by the pytest-xdist process, so two runs on one machine, and two processes of one
run, never meet. tests/conftest.py removes them when the run ends."""

import os
import uuid

from config.env import analysis_cache, env_str, filesystem_broker, parse_cache_url, session_engine
from config.settings.base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# One thread for torch (and the BLAS under numpy and scikit-learn) in each test process and in the
# commands and workers it starts, which inherit it: the suite runs one process more than the cores,
# and torch's threads, each as many as the cores, spin waiting for a core the others hold. The LoRA
# tests beside two busy loops on 2 cores: 20 s of CPU with one thread, 38 to 58 s with two.
os.environ.setdefault("OMP_NUM_THREADS", "1")

NSM_TEST_RUN = os.environ.setdefault("NSM_TEST_RUN", f"{os.getpid()}-{uuid.uuid4().hex[:8]}")
# the suite runs on every core (pytest-xdist, `make test`): each of its processes has places of its
# own inside the run's (the database name gets pytest-django's _gw<n> suffix besides)
NSM_TEST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
NSM_TEST_RUN_DIR = VAR_DIR / "test-runs" / NSM_TEST_RUN / NSM_TEST_WORKER  # noqa: F405

# The suite's webhook receivers listen on 127.0.0.1 (tests/webhooks/test_private_addresses.py turns
# this off to see private addresses refused).
NSM_WEBHOOK_ALLOW_PRIVATE = True

# Jobs run inline when a test starts one, unless the test runs a real worker (tests/integration,
# tests/browser), which switches this off on the Celery app.
CELERY_TASK_ALWAYS_EAGER = True
# Their own broker folder, so a test's messages never reach a `make run` worker (and back).
NSM_BROKER_DIR = NSM_TEST_RUN_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker(NSM_BROKER_DIR)
CELERY_TASK_EAGER_PROPAGATES = True
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not memory: a real worker process started by a browser test reads the same database.
    DATABASES["default"]["TEST"] = {"NAME": str(NSM_TEST_RUN_DIR / "test.sqlite3")}  # noqa: F405
else:
    # Django would name it test_<name> for every run alike
    name = DATABASES["default"]["NAME"]  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": f"test_{name}_{NSM_TEST_RUN.replace('-', '_')}"}  # noqa: F405
NSM_EXPORT_DIR = NSM_TEST_RUN_DIR / "exports"
NSM_MODEL_DIR = NSM_TEST_RUN_DIR / "models"
NSM_IMPORT_STAGING_DIR = NSM_TEST_RUN_DIR / "import-staging"
# Their own cache folder, which each test empties (tests/conftest.py); a worker started by a test
# is pointed at it.
NSM_CACHE_URL = env_str("NSM_TEST_CACHE_URL", "") or f"file://{NSM_TEST_RUN_DIR / 'cache'}"
CACHES = {
    "default": parse_cache_url(NSM_CACHE_URL, base_dir=BASE_DIR),  # noqa: F405
    "analysis": analysis_cache(NSM_ANALYSIS_CACHE_URL, base_dir=BASE_DIR),  # noqa: F405
}
SESSION_ENGINE = session_engine(CACHES["default"])
