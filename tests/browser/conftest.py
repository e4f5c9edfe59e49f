"""Browser tests: Playwright drives the system's Chromium (Debian's `chromium-headless-shell`
package, or its `chromium`); no browser is downloaded. Outside CI a missing Chromium skips with
the reason; in CI it fails."""

import os
import shutil

import pytest
from django.db import connection

from config.celery import app as celery_app
from tests.integration.deployment import Deployment, sqlite_row

# Playwright's sync API runs an event loop in the test thread; the Django ORM calls the tests
# make there (creating users) are still synchronous, so allow them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def chromium_path() -> str | None:
    """NSM_CHROMIUM, else Debian's Chromium headless shell, else its full Chromium. The shell is
    the same Chromium (one Debian source package, one version) built for headless use only, as
    Playwright runs its own headless tests: the browser suite took 157 s of the machine's CPU and
    88 s with it against 240 to 248 s and 128 to 131 s with the full browser in headless mode
    (2026-11-29, two runs of each, every test passing in all four)."""
    return (
        os.environ.get("NSM_CHROMIUM")
        or shutil.which("chromium-headless-shell")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect

    # CI runs on two cores beside worker processes: give assertions the same patience as actions.
    expect.set_options(timeout=10_000)
    path = chromium_path()
    if path is None:
        message = (
            "no Chromium found: apt-get install chromium-headless-shell (or chromium), "
            "or set NSM_CHROMIUM to its path"
        )
        if in_ci():
            pytest.fail(message)
        pytest.skip(reason=message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# Every page of the test's own context reports what its Content-Security-Policy blocked (an inline
# style or script, a source from elsewhere): the policy is on in every environment, so a violation
# is a feature broken in production; the test fails with the list at its end.
CSP_RECORDER = (
    "document.addEventListener('securitypolicyviolation', e => window.__nsmCspViolation("
    "`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`))"
)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    violations: list[str] = []
    context.expose_binding("__nsmCspViolation", lambda source, text: violations.append(text))
    context.add_init_script(CSP_RECORDER)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
    assert violations == [], f"the Content-Security-Policy blocked: {violations}"


@pytest.fixture
def login(page, live_server):
    def _login(username: str, password: str) -> None:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    return _login


@pytest.fixture
def worker_env() -> dict[str, str]:
    """More environment for the worker process (a test overrides this fixture to add some)."""
    return {}


@pytest.fixture
def worker(transactional_db, tmp_path, settings, worker_env):
    """A worker process on this test database, and the app sending to it instead of running inline."""
    if connection.vendor != "sqlite":
        message = "the browser tests share the test database with a worker through a SQLite file"
        if in_ci():
            pytest.fail(f"{message}: run them without DATABASE_URL (CI must not skip them)")
        pytest.skip(reason=message)
    db = connection.settings_dict["NAME"]
    env = {"DATABASE_URL": f"sqlite:///{db}", "NSM_JOB_BATCH_SIZE": "10"}
    # the broker folder of the test settings: the app here already sends there
    env["NSM_BROKER_DIR"] = str(settings.NSM_BROKER_DIR)
    env["NSM_CACHE_URL"] = settings.NSM_CACHE_URL  # and its cache, which each test empties
    env |= worker_env
    deployment = Deployment(tmp_path, env, sqlite_row(db))
    for message in (settings.NSM_BROKER_DIR / "queue").glob("*.msg"):
        message.unlink()  # left by an interrupted run
    celery_app.conf.task_always_eager = False
    deployment.start_worker()
    yield deployment
    deployment.stop()
    celery_app.conf.task_always_eager = True
