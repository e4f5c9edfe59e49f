"""Named personas, set up once per test that asks for them (healthchecks' BaseTestCase style)."""

import shutil
import time

import pytest
from django.contrib.auth.models import Group, User

from annotator.models import Item, ParserPrediction, Round
from annotator.roles import ADJUDICATOR, ADMIN, ANNOTATOR
from annotator.sampling import item_set_from_items
from annotator.services import round_create
from jobs.models import Job
from tests.factories import PRED, make_items
from tests.integration.deployment import drop_run_postgres_template


@pytest.fixture(autouse=True)
def _models_in_tmp(request):
    """Jobs write and read models inside NSM_MODEL_DIR only (predictions.parsers.inside_model_dir): a
    test's own tmp_path is its model folder, so the folders tests name there are allowed."""
    if "tmp_path" in request.fixturenames:
        request.getfixturevalue("settings").NSM_MODEL_DIR = request.getfixturevalue("tmp_path")
    yield


@pytest.fixture(autouse=True)
def _english_after():
    """A request in German leaves German active in its thread (the test client runs the view in
    the test's own): each test starts, and ends, in the default language."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _fresh_caches():
    """Each test starts with empty caches: ids are reused after a rollback, cached values are not."""
    from django.core.cache import caches

    for alias in caches:
        caches[alias].clear()
    yield


def _user(username: str, *roles: str, **extra) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-pw", **extra)
    for role in roles:
        user.groups.add(Group.objects.get_or_create(name=role)[0])  # flushed by transactional tests
    return user


@pytest.fixture
def annotator(db) -> User:
    return _user("alice", ANNOTATOR)


@pytest.fixture
def other_annotator(db) -> User:
    return _user("bob", ANNOTATOR)


@pytest.fixture
def adjudicator(db) -> User:
    return _user("carol", ADJUDICATOR)


@pytest.fixture
def other_adjudicator(db) -> User:
    return _user("dave", ADJUDICATOR)


@pytest.fixture
def admin_user(db) -> User:
    return _user("dana", ADMIN, is_staff=True)


@pytest.fixture
def outsider(db) -> User:
    return _user("eve")


@pytest.fixture
def items(db) -> list[Item]:
    return make_items()


@pytest.fixture
def prefilled_round(items, annotator, other_annotator) -> Round:
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    item_set = item_set_from_items(name="set-p", items=items)
    return round_create(
        name="prefilled",
        item_set=item_set,
        annotators=[annotator, other_annotator],
        mode="prefilled",
        prefill_parser="lex",
        allow_prefill_overlap=True,  # `blind_round`'s items and annotators, when a test asks for it first
    )


@pytest.fixture
def blind_round(items, annotator, other_annotator) -> Round:
    for item in items:
        ParserPrediction.objects.get_or_create(
            item=item, parser="lex", defaults={"explication": PRED, "legal": True}
        )
    item_set = item_set_from_items(name="set-b", items=items)
    return round_create(
        name="blind",
        item_set=item_set,
        annotators=[annotator, other_annotator],
        mode="blind",
        # the same items and annotators as `prefilled_round`, which some tests use beside it
        allow_prefill_overlap=True,
    )


@pytest.fixture
def submitted(prefilled_round, annotator, other_annotator) -> Round:
    """The prefilled round with both annotators' work in: alice keeps the prefill on all four
    items; bob says agency=someone-else on the first two and intensity=very on the third."""
    from annotator.models import Assignment
    from annotator.services import annotation_submit

    changes = {0: {"agency": "someone-else"}, 1: {"agency": "someone-else"}, 2: {"intensity": "very"}}
    for user, diff in ((annotator, {}), (other_annotator, changes)):
        for k, a in enumerate(
            Assignment.objects.filter(round=prefilled_round, annotator=user).order_by("item_id")
        ):
            annotation_submit(assignment=a, user=user, values={**PRED, **diff.get(k, {})}, base_version=0)
    return prefilled_round


@pytest.fixture
def gold_round(submitted, adjudicator):
    """All four items resolved: one unanimous, two by hand, one kept with two construals."""
    from adjudication.gold.services import gold_resolve, gold_sync
    from adjudication.models import GoldItem

    gold_sync(submitted)
    golds = {g.item.source_id: g for g in GoldItem.objects.filter(round=submitted).select_related("item")}
    gold_resolve(user=adjudicator, gold=golds["t1-0"], values={"agency": "i"}, why="the writer acts")
    gold_resolve(user=adjudicator, gold=golds["t2-0"], values={"agency": "someone-else"}, why="another acts")
    other = "very" if PRED["intensity"] != "very" else "plain"
    gold_resolve(
        user=adjudicator,
        gold=golds["t3-0"],
        values={"intensity": PRED["intensity"]},
        second={"intensity": other},
        why="both readings hold",
    )
    assert GoldItem.objects.filter(round=submitted, status="resolved").count() == 4
    return submitted


@pytest.fixture
def one_job_of_each_kind(admin_user, prefilled_round):
    item_set = item_set_from_items(name="listed", items=make_items(n_copies=1))
    prefill = Job.objects.create(
        kind="prefill", status=Job.Status.DONE, scope_key="set|lexical", item_set=item_set,
        params={"backend": "lexical", "model": "", "mode": "", "text_field": "text", "overwrite": False},
        engine="lexical", engine_version="cues-1", total=4, done=4, created_by=admin_user,
    )  # fmt: skip
    verify = Job.objects.create(
        kind="verify", status=Job.Status.RUNNING, scope_key="set|verify", item_set=item_set,
        params={"source": "lexical", "model": "/models/nli", "text_field": "text"}, total=4, done=1,
        created_by=admin_user,
    )  # fmt: skip
    export = Job.objects.create(
        kind="export", status=Job.Status.FAILED, scope_key="all|export", round=prefilled_round,
        params={"model": "", "verify": False}, error="disk full", created_by=admin_user,
    )  # fmt: skip
    return prefill, verify, export


# The longest tests, longest first (the --durations of a CI run on 2 cores). pytest-xdist hands
# tests out in collection order (two at a time: the Makefile's --maxschedchunk), so a long test
# collected last starts when the other workers are nearly done and the run waits for it alone;
# started first, the short tests fill the workers around it. Anything not listed keeps its place.
LONGEST_FIRST = (
    "tests/integration/test_postgres.py",
    "tests/integration/test_api_fuzz.py",
    "tests/integration/test_deploy_guide.py",
    "tests/integration/test_export_worker.py",
    "tests/integration/test_worker_faults.py",
    "tests/integration/test_worker_queues.py",
    "tests/rules/test_active_rule_set.py",
    "tests/integration/test_site_faults.py",
    "tests/browser/test_team_day.py",
    "tests/browser/test_export.py",
    "tests/integration/",
    "tests/browser/",
    "tests/nsmcore/test_lora.py",
    "tests/nsmcore/test_parsers_transformers.py",
)


def _database_use(item) -> str:
    """ "none", "transaction" (the test database wrapped in a transaction) or "flush" (a
    transactional test, which empties the tables when it ends), as pytest-django reads it."""
    fixtures = getattr(item, "fixturenames", ())
    marker = item.get_closest_marker("django_db")
    if "transactional_db" in fixtures or "live_server" in fixtures:
        return "flush"
    if marker is not None:
        return (
            "flush"
            if marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences")
            else "transaction"
        )
    return "transaction" if "db" in fixtures else "none"


def pytest_collection_modifyitems(session, config, items):
    """Longest first, within what the database allows: a transactional test empties the tables
    (the rows the data migrations wrote among them), so no test that reads those rows may run
    after one in the same worker. pytest-django orders them last for that; here every test that
    needs the database in a transaction is handed out before any transactional one, and the long
    tests that use no database go first of all."""

    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return next(
            (i for i, prefix in enumerate(LONGEST_FIRST) if path.startswith(prefix)), len(LONGEST_FIRST)
        )

    def key(item) -> tuple[int, int]:
        use, place = _database_use(item), rank(item)
        if use == "transaction":
            return 1, place
        if use == "none" and place < len(LONGEST_FIRST):
            return 0, place
        return 2, place

    items.sort(key=key)  # stable: otherwise the collection's order (pytest-django's groups)


@pytest.hookimpl(trylast=True)  # after the session's fixtures (the test database) are torn down
def pytest_sessionfinish(session, exitstatus):
    """Remove this run's places (config/settings/test.py), and those of runs killed more than a
    day ago (they could not remove their own)."""
    from django.conf import settings

    run_dir = getattr(settings, "NSM_TEST_RUN_DIR", None)
    if run_dir is None:
        return
    shutil.rmtree(run_dir, ignore_errors=True)  # this process's places
    if not hasattr(session.config, "workerinput"):
        # not a pytest-xdist worker, so the run's last process (the controller ends after its
        # workers; asked of pytest, not of the settings' name for it, which a run started from a
        # worker inherits): the places the run's processes shared (tests/integration/
        # deployment.py's templates) go with it
        drop_run_postgres_template(run_dir.parent / "shared")
        shutil.rmtree(run_dir.parent, ignore_errors=True)
    for old in run_dir.parent.parent.glob("*"):
        if old.stat().st_mtime < time.time() - 86_400:
            shutil.rmtree(old, ignore_errors=True)
