"""The job plumbing knows no kind: a kind registered here (as a feature's module would) runs through
the same job_run with its typed parameters; stored parameters that do not read fail the job with
the field named instead of crashing the worker; a database that goes away is retried with backoff."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.utils.html import format_html

from annotator.sampling import item_set_from_items
from jobs import kinds
from jobs.kinds import JobError, JobKind, Params, job_kind_register
from jobs.models import Job
from jobs.services import job_create, job_run, job_stopped

COUNT = "count"


@dataclass(frozen=True)
class CountParams(Params):
    upto: int
    word: str = "tick"
    loud: bool = False

    def validate(self) -> None:
        if self.upto < 0:
            self.bad("upto", f"must be 0 or more, not {self.upto}")


SEEN: list[tuple[int, CountParams]] = []


def run_count(job: Job, params: CountParams) -> bool:
    """Counts to ``upto``, one item a batch, writing progress like a real kind."""
    SEEN.append((job.pk, params))
    Job.objects.filter(pk=job.pk).update(
        total=params.upto, engine=f"counter-{params.word}", engine_version="1"
    )
    for n in range(params.upto):
        if job_stopped(job.pk):
            return False
        Job.objects.filter(pk=job.pk).update(done=n + 1)
    Job.objects.filter(pk=job.pk).update(summary={"said": params.word * params.upto})
    return True


@pytest.fixture
def retries_inline():
    """Tasks run inline in the tests; a retry then runs again at once, as the worker would after its
    wait. Exceptions stay in the task's result, as in a worker, instead of reaching the test."""
    from celery import current_app

    before = current_app.conf.task_eager_propagates
    current_app.conf.task_eager_propagates = False
    yield
    current_app.conf.task_eager_propagates = before


@pytest.fixture
def count_kind():
    kind = job_kind_register(
        JobKind(
            name=COUNT,
            label="counting",
            params=CountParams,
            run=run_count,
            describe=lambda job, p: format_html("counts to {} saying <code>{}</code>", p.upto, p.word),
        )
    )
    SEEN.clear()
    yield kind
    del kinds.KINDS[COUNT]


def count_job(user=None, **params) -> Job:
    return job_create(
        COUNT, user=user, item_set=None, round_=None, key="n", params=CountParams(**params), enqueue=False
    )


def test_a_kind_registered_elsewhere_runs_through_job_run_with_its_typed_params(db, count_kind):
    job = count_job(upto=3, word="tock")
    assert job.params == {"upto": 3, "word": "tock", "loud": False}  # stored as JSON
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.error) == ("done", 3, 3, "")
    assert job.summary == {"said": "tocktocktock"}
    assert (job.engine, job.engine_version) == ("counter-tock", "1")
    assert [(job.pk, CountParams(upto=3, word="tock"))] == SEEN
    assert job.typed_params == CountParams(upto=3, word="tock")
    assert (job.kind_label, job.subject) == ("counting", "everything")
    assert str(job.description) == "counts to 3 saying <code>tock</code>"


def test_a_registered_kind_shows_on_the_job_list_and_its_page(client, admin_user, count_kind):
    job = count_job(user=admin_user, upto=2)
    client.force_login(admin_user)
    page = client.get("/jobs/").content.decode()
    row = page[page.index(f'<tr id="job-{job.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "counting" in row and "counts to 2 saying <code>tick</code>" in row
    detail = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Counting #" in detail and "counts to 2 saying <code>tick</code>" in detail


def test_cancel_and_resume_work_for_any_kind(db, count_kind):
    job = count_job(upto=4)
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("cancelled", 0)
    from jobs.services import job_resume

    job_resume(job=job)
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("done", 4)


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        (
            {"upto": 3, "speed": 2},
            "count job parameter 'speed': unknown; the parameters are upto, word, loud",
        ),
        ({"word": "tick"}, "count job parameter 'upto': missing"),
        ({"upto": "3"}, "count job parameter 'upto': expected int, got '3'"),
        ({"upto": True}, "count job parameter 'upto': expected int, got True"),
        ({"upto": 3, "loud": "yes"}, "count job parameter 'loud': expected bool, got 'yes'"),
        ({"upto": -1}, "count job parameter 'upto': must be 0 or more, not -1"),
        (["upto", 3], "count job parameters: expected an object"),
    ],
)
def test_stored_params_that_do_not_read_fail_the_job_with_the_field_named(db, count_kind, stored, message):
    job = count_job(upto=1)
    Job.objects.filter(pk=job.pk).update(params=stored)  # an old row, or one edited by hand
    job_run(job.pk)  # no exception for the worker: the job records it
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error.startswith(message)
    assert job.finished_at is not None
    assert SEEN == []  # the runner never saw bad parameters
    with pytest.raises(JobError, match=re.escape(message)):
        _ = job.typed_params


def test_a_job_with_bad_stored_params_still_shows_on_the_pages(client, admin_user, count_kind):
    job = count_job(user=admin_user, upto=1)
    Job.objects.filter(pk=job.pk).update(params={"upto": "many"}, status="failed")
    client.force_login(admin_user)
    page = client.get("/jobs/").content.decode()
    assert "unreadable parameters: count job parameter &#x27;upto&#x27;: expected int" in page
    detail = client.get(f"/jobs/{job.pk}/")
    assert detail.status_code == 200
    assert 'id="job-params-error"' in detail.content.decode()


def test_a_job_of_a_kind_nobody_registered_fails_with_the_kind_named(db):
    job = Job.objects.create(kind="distil", scope_key="all|x", params={})
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    kinds = "export, prefill, ranking, rawexport, retrain, simulate, train, verify"
    assert job.error.startswith(f"unknown job kind 'distil'; kinds: {kinds}")


def test_params_are_checked_when_built_with_the_field_named(count_kind):
    with pytest.raises(JobError, match="count job parameter 'word': expected str, got 5"):
        CountParams(upto=1, word=5)
    with pytest.raises(JobError, match="count job parameter 'upto': must be 0 or more"):
        CountParams(upto=-2)


def test_a_job_takes_only_its_own_kind_of_params(db, count_kind):
    from exports.export import ExportParams

    with pytest.raises(TypeError, match="a count job takes CountParams, not ExportParams"):
        job_create(COUNT, user=None, item_set=None, round_=None, key="n", params=ExportParams(verify=False),
                   enqueue=False)  # fmt: skip
    assert not Job.objects.exists()


def test_a_kind_name_is_registered_once(count_kind):
    with pytest.raises(ValueError, match="registered twice"):
        job_kind_register(JobKind(COUNT, "again", CountParams, run_count, lambda j, p: ""))


def _code_words(node: ast.AST) -> set[str]:
    """The names and string values in code under ``node``, docstrings left out."""
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(node)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    words = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            words.add(n.id)
        elif isinstance(n, ast.Attribute):
            words.add(n.attr)
        elif isinstance(n, ast.alias | ast.FunctionDef | ast.ClassDef):
            words.add(n.name)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings:
            words.add(n.value)
    return {w.lower() for w in words}


def test_the_plumbing_names_no_kind():
    """The plumbing (jobs.services, jobs.kinds, jobs.tasks, the Job model) serves every kind: a
    kind's name in its code is a feature leaking in."""
    root = Path(django_settings.BASE_DIR) / "jobs"
    trees = {name: ast.parse((root / name).read_text()) for name in ("services.py", "kinds.py", "tasks.py")}
    models = ast.parse((root / "models.py").read_text())
    trees["models.py: Job"] = next(n for n in models.body if isinstance(n, ast.ClassDef) and n.name == "Job")
    for name, tree in trees.items():
        words = _code_words(tree)
        assert "job_run" in words or name != "services.py"  # the scan sees the code
        for kind in ("prefill", "verif", "export", "parser_"):
            leaks = sorted(w for w in words if kind in w)
            assert not leaks, f"{name} names {leaks}"


def test_a_database_that_goes_away_is_retried_and_the_job_goes_on(db, count_kind, retries_inline):
    """The task puts the job back in the queue and retries (run inline here: no wait)."""
    from jobs import tasks

    calls = []

    def flaky(job, params):
        calls.append(job.pk)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return run_count(job, params)

    kinds.KINDS[COUNT] = JobKind(COUNT, "counting", CountParams, flaky, lambda j, p: "")
    job = count_job(upto=2)
    assert tasks.run_job.delay(job.pk).successful()
    job.refresh_from_db()
    assert len(calls) == 2
    assert (job.status, job.done, job.error) == ("done", 2, "")


def test_retries_that_run_out_fail_the_job_with_the_reason(db, count_kind, retries_inline):
    from jobs import tasks

    calls = []

    def down(job, params):
        calls.append(job.pk)
        raise OperationalError("could not connect to server")

    kinds.KINDS[COUNT] = JobKind(COUNT, "counting", CountParams, down, lambda j, p: "")
    job = count_job(upto=2)
    result = tasks.run_job.delay(job.pk)
    assert isinstance(result.result, OperationalError)
    job.refresh_from_db()
    assert len(calls) == tasks.RETRIES + 1
    assert job.status == "failed"
    assert job.error == (
        f"the database could not be reached after {tasks.RETRIES + 1} tries: could not connect to server"
    )
    assert job.can_resume


def test_bad_input_to_a_job_command_exits_2_with_the_reason(db):
    item_set_from_items(name="empty", items=[])
    with pytest.raises(CommandError, match="item set empty has no items") as raised:
        call_command("prefill", "--item-set", "empty", "--backend", "lexical")
    assert raised.value.returncode == 2
    with pytest.raises(CommandError, match="no item set or round named 'nope'") as raised:
        call_command("verify", "--item-set", "nope", "--parser", "lexical")
    assert raised.value.returncode == 2
    assert not Job.objects.exists()
