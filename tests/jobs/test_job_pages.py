"""The jobs pages as an admin sees them: the list with a job of every kind, and the way the
verify and export forms say that no verifier model is usable instead of hanging a request."""

import pytest

from annotator.sampling import item_set_from_items
from jobs.models import Job
from tests.factories import make_items


@pytest.fixture
def one_job_of_each_kind(admin_user, prefilled_round):
    item_set = item_set_from_items(name="listed", items=make_items(n_copies=1))
    prefill = Job.objects.create(
        kind=Job.Kind.PREFILL, status=Job.Status.DONE, scope_key="set|lexical", item_set=item_set,
        params={"backend": "lexical", "model": "", "mode": "", "text_field": "text", "overwrite": False},
        parser_name="lexical", parser_version="cues-1", total=4, done=4, created_by=admin_user,
    )  # fmt: skip
    verify = Job.objects.create(
        kind=Job.Kind.VERIFY, status=Job.Status.RUNNING, scope_key="set|verify", item_set=item_set,
        params={"source": "lexical", "model": "/models/nli", "text_field": "text"}, total=4, done=1,
        created_by=admin_user,
    )  # fmt: skip
    export = Job.objects.create(
        kind=Job.Kind.EXPORT, status=Job.Status.FAILED, scope_key="all|export", round=prefilled_round,
        params={"model": "", "verify": False}, error="disk full", created_by=admin_user,
    )  # fmt: skip
    return prefill, verify, export


def _row(page: str, job: Job) -> str:
    start = page.index(f'<tr id="job-{job.pk}"')
    return page[start : page.index("</tr>", start)]


def test_the_job_list_shows_a_row_for_every_kind_of_job(client, admin_user, one_job_of_each_kind):
    prefill, verify, export = one_job_of_each_kind
    client.force_login(admin_user)
    response = client.get("/jobs/")
    assert response.status_code == 200
    page = response.content.decode()
    row = _row(page, prefill)
    assert "parser prefill" in row and "item set listed" in row and "<code>lexical</code>" in row
    assert "status-done" in row and "4 / 4" in row
    row = _row(page, verify)
    assert "NLI verification" in row and "parser <code>lexical</code>" in row
    assert "model <code>/models/nli</code>" in row and "status-running" in row and "1 / 4" in row
    row = _row(page, export)
    assert "EmoExpl export" in row and "round prefilled" in row and "without verification" in row
    assert "status-failed" in row
    assert Job.objects.count() == 3
