"""Verification jobs on a tiny NLI model built here: every rendered line checked, judgements
cached (a second run costs no forward pass), unusable models refused before a job starts."""

import pytest

from adjudication.gold.services import gold_sync
from annotator.models import ParserPrediction
from annotator.sampling import item_set_from_items
from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import job_run
from nsmcore.render import RENDERER_VERSION, render
from nsmcore.schema import Explication
from nsmcore.tiny import build_tiny_nli
from predictions.prefill import job_prefill_start
from tests.factories import make_items
from verification.models import LineVerification
from verification.verify import job_verify_start

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")


@pytest.fixture(scope="module")
def nli_path(tmp_path_factory):
    return str(
        build_tiny_nli(tmp_path_factory.mktemp("nli"), labels=("neutral", "contradiction", "entailment"))
    )


@pytest.fixture
def parsed_set(db, admin_user):
    item_set = item_set_from_items(name="eight", items=make_items(n_copies=2))
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    job_run(job.pk)
    return item_set


def expected_lines(item_set):
    return sum(
        len(render(Explication.from_dict(p.explication)))
        for p in ParserPrediction.objects.filter(item__item_sets=item_set, parser="lexical")
    )


def test_a_verification_job_checks_every_line_and_caches_it(parsed_set, admin_user, nli_path, settings):
    settings.NSM_VERIFIER_DEVICE = "cpu"
    job = job_verify_start(
        user=admin_user, item_set=parsed_set, parser="lexical", model=nli_path, enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("done", 8, 8), job.error
    lines = expected_lines(parsed_set)
    assert job.summary["lines"] == lines
    assert 0 <= job.summary["mean_item_score"] <= 1
    assert job.summary["threshold"] == 0.5
    assert job.summary["renderer_version"] == RENDERER_VERSION == "3"  # the wording it checked
    cached = LineVerification.objects.count()
    assert 0 < cached <= lines  # repeated (text, line) pairs are judged once
    row = LineVerification.objects.first()
    assert row.p_entailment + row.p_neutral + row.p_contradiction == pytest.approx(1.0, abs=1e-5)
    assert row.model.startswith(f"{nli_path}@local-")

    again = job_verify_start(
        user=admin_user, item_set=parsed_set, parser="lexical", model=nli_path, enqueue=False
    )
    job_run(again.pk)
    again.refresh_from_db()
    assert again.status == "done" and LineVerification.objects.count() == cached
    assert again.summary["mean_item_score"] == job.summary["mean_item_score"]


def test_gold_is_verified_for_a_round(submitted, admin_user, nli_path, settings):
    settings.NSM_VERIFIER_DEVICE = "cpu"
    gold_sync(submitted)  # one item is unanimous, so gold at once
    job = job_verify_start(user=admin_user, round_=submitted, model=nli_path, enqueue=False)
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.total, job.summary["items"]) == ("done", 1, 1)


def test_missing_models_are_refused_before_a_job_starts_and_unloadable_ones_fail_it(
    parsed_set, admin_user, tmp_path
):
    sentiment = build_tiny_nli(tmp_path / "sentiment", labels=("negative", "positive"))
    with pytest.raises(JobError, match="no model folder at /models/none"):
        job_verify_start(user=admin_user, item_set=parsed_set, parser="lexical", model="/models/none")
    with pytest.raises(JobError, match="choose the parser"):
        job_verify_start(user=admin_user, item_set=parsed_set, model=str(sentiment))
    assert not Job.objects.filter(kind="verify").exists()
    job = job_verify_start(
        user=admin_user, item_set=parsed_set, parser="lexical", model=str(sentiment), enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "no entailment label" in job.error
    assert "NSM_VERIFIER_MODEL" in job.error and not LineVerification.objects.exists()


def test_the_jobs_page_starts_a_verification_or_names_the_refusal(
    client, admin_user, parsed_set, nli_path, settings, django_capture_on_commit_callbacks
):
    settings.NSM_VERIFIER_DEVICE = "cpu"
    settings.NSM_VERIFIER_MODEL = nli_path
    client.force_login(admin_user)
    missing = {"parser": "lexical", "model": "/models/none", "text_field": "text"}
    refused = client.post("/jobs/start/verify/", {"target": f"set:{parsed_set.pk}", **missing})
    assert refused.status_code == 400
    assert refused.content.decode().count("no model folder at /models/none") == 1
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/jobs/start/verify/",
            {"target": f"set:{parsed_set.pk}", "parser": "lexical", "model": "", "text_field": "text"},
        )
    job = Job.objects.get(kind="verify")
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert 'id="verify-summary"' in page
    assert "lines of 8 items checked" in page
    job.refresh_from_db()
    assert job.status == "done" and job.typed_params.model == nli_path
