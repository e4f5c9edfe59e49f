"""The jobs API starts every kind of job with the page's own rules (201 with the job, 400 naming the
field, 409 naming the active twin), lists and filters jobs and exports, and downloads an export's
file; only admins may use any of it."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from exports.models import Export
from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import JobStateError, job_cancel, job_run


@pytest.fixture(autouse=True)
def _places(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    settings.NSM_MODEL_DIR = tmp_path / "models"


@pytest.fixture
def nli_folder(settings, tmp_path):
    """A folder the verifier would load (a config.json is what is checked before a job exists);
    no job is run with it here."""
    folder = tmp_path / "nli"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    settings.NSM_VERIFIER_MODEL = str(folder)
    return folder


@pytest.fixture
def api(client, admin_user):
    client.force_login(admin_user)

    def post(name: str, body: dict):
        return client.post(reverse(name), body, content_type="application/json")

    client.post_json = post
    return client


def started(response, kind: str) -> Job:
    assert response.status_code == 201, response.content
    job = Job.objects.get(pk=response.json()["id"])
    assert job.kind == kind and response.json()["kind"] == kind and job.status == "queued"
    return job


def test_every_kind_starts_through_the_api(api, gold_round, admin_user, nli_folder):
    prefill = started(
        api.post_json("api_job_prefill", {"round": gold_round.pk, "backend": "lexical"}), "prefill"
    )
    assert prefill.params["backend"] == "lexical" and prefill.round == gold_round

    verify = started(api.post_json("api_job_verify", {"round": gold_round.pk}), "verify")
    assert verify.params == {"source": "gold", "model": str(nli_folder), "text_field": "text"}
    parser = started(
        api.post_json("api_job_verify", {"item_set": gold_round.item_set.pk, "parser": "lex"}), "verify"
    )
    assert (
        parser.params["source"] == "lex" and parser.item_set == gold_round.item_set and parser.round is None
    )

    export = started(api.post_json("api_job_export", {"round": gold_round.pk, "verify": False}), "export")
    assert export.params == {"verify": False, "model": ""} and export.round == gold_round
    verified = started(api.post_json("api_job_export", {}), "export")  # the whole corpus, verified
    assert verified.params == {"verify": True, "model": str(nli_folder)} and verified.round is None

    train = started(
        api.post_json("api_job_train", {"round": gold_round.pk, "method": "classifier", "seed": 7}), "train"
    )
    assert (train.typed_params.method, train.typed_params.seed, train.typed_params.passes) == (
        "classifier",
        7,
        "gold",
    )
    lora = started(
        api.post_json("api_job_train", {"round": gold_round.pk, "base_model": "org/tiny-lm", "rank": 4}),
        "train",
    )
    assert (lora.typed_params.method, lora.typed_params.rank, lora.typed_params.epochs) == ("lora", 4, 3)

    raw = started(api.post_json("api_job_rawexport", {"round": gold_round.pk, "format": "csv"}), "rawexport")
    assert raw.params == {"format": "csv"}
    assert Job.objects.filter(created_by=admin_user).count() == 8
    assert {j["download"] for j in api.get(reverse("api_jobs")).json()["results"]} == {None}


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("api_job_prefill", {"round": "R", "backend": "lexical"}),
        ("api_job_verify", {"round": "R"}),
        ("api_job_export", {"round": "R", "verify": False}),
        ("api_job_train", {"round": "R", "method": "classifier"}),
        ("api_job_rawexport", {"round": "R"}),
    ],
)
def test_the_same_job_twice_is_a_409_naming_the_first(api, gold_round, nli_folder, name, body):
    body = {**body, "round": gold_round.pk}
    first = api.post_json(name, body)
    assert first.status_code == 201, first.content
    second = api.post_json(name, body)
    assert second.status_code == 409
    assert second.json()["job"] == first.json()["id"] and "already queued" in second.json()["detail"]
    assert Job.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "body", "field", "says"),
    [
        ("api_job_verify", {"round": 999_999}, "round", "Invalid pk"),
        ("api_job_verify", {}, "non_field_errors", "give one of item_set or round"),
        ("api_job_verify", {"round": "R", "item_set": "S"}, "non_field_errors", "give one of"),
        ("api_job_verify", {"round": "R", "text_field": "title"}, "text_field", "not a valid choice"),
        ("api_job_verify", {"round": "R", "model": "x" * 251}, "model", "250"),
        ("api_job_export", {"verify": "maybe"}, "verify", "valid boolean"),
        ("api_job_export", {"round": "R", "verify": False, "model": "m" * 251}, "model", "250"),
        ("api_job_train", {"round": "R", "method": "lora", "base_model": ""}, "base_model", "required for"),
        ("api_job_train", {"round": "R", "rank": 0}, "rank", "greater than or equal to 1"),
        ("api_job_train", {"round": "R", "dropout": 1.5}, "dropout", "less than or equal to 0.99"),
        ("api_job_train", {"round": "R", "method": "bayes"}, "method", "not a valid choice"),
        ("api_job_rawexport", {"round": "R", "format": "xml"}, "format", "not a valid choice"),
        ("api_job_rawexport", {}, "round", "required"),
    ],
)
def test_bad_parameters_are_a_400_naming_the_field(api, gold_round, nli_folder, name, body, field, says):
    ids = {"R": gold_round.pk, "S": gold_round.item_set.pk}
    body = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
    response = api.post_json(name, body)
    assert response.status_code == 400, response.content
    assert says in json.dumps(response.json()[field])
    assert not Job.objects.exists()


def test_what_the_form_refuses_the_api_refuses_with_the_same_reason(api, gold_round, settings):
    """No usable NLI model configured: the page shows verification switched off; the API says why,
    naming the setting, for a verification and for an export that asks to verify."""
    settings.NSM_VERIFIER_MODEL = "/nowhere/nli"
    response = api.post_json("api_job_verify", {"round": gold_round.pk})
    assert response.status_code == 400
    assert "NSM_VERIFIER_MODEL=/nowhere/nli" in response.json()["model"][0]
    refused = api.post_json("api_job_export", {"round": gold_round.pk})
    assert refused.status_code == 400 and "without verification" in refused.json()["verify"][0]
    assert not Job.objects.exists()
    assert api.post_json("api_job_export", {"round": gold_round.pk, "verify": False}).status_code == 201
    # held-out items are the training service's refusal: a 400 with its reason, no job
    nothing = api.post_json("api_job_train", {"item_set": gold_round.item_set.pk, "passes": "annotator:zed"})
    assert nothing.status_code == 400 and Job.objects.filter(kind="train").count() == 0


def test_a_finished_export_has_a_download_that_gives_its_bytes(api, gold_round):
    for body, name in (({"round": gold_round.pk, "verify": False}, "api_job_export"),
                       ({"round": gold_round.pk, "format": "jsonl"}, "api_job_rawexport")):  # fmt: skip
        job = Job.objects.get(pk=api.post_json(name, body).json()["id"])
        assert api.get(reverse("api_job", args=[job.pk])).json()["download"] is None  # not run yet
        job_run(job.pk)
        export = Export.objects.get(job=job)
        link = api.get(reverse("api_job", args=[job.pk])).json()["download"]
        assert link == f"http://testserver/api/exports/{export.pk}/download/"
        response = api.get(link)
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == export.path.read_bytes() != b""
        assert response["Content-Disposition"] == f'attachment; filename="{export.filename}"'
    assert response["Content-Type"] == "application/jsonl; charset=utf-8"
    # a client that asks for the file's own type still gets it (no 406)
    assert api.get(link, HTTP_ACCEPT="application/jsonl").status_code == 200


def test_exports_are_listed_filtered_and_read(api, gold_round, admin_user):
    for body, name in (({"round": gold_round.pk, "verify": False}, "api_job_export"),
                       ({"round": gold_round.pk, "format": "csv"}, "api_job_rawexport")):  # fmt: skip
        job_run(api.post_json(name, body).json()["id"])
    gold, raw = Export.objects.get(kind="emoexpl"), Export.objects.get(kind="raw")
    listed = api.get(reverse("api_exports")).json()
    assert listed["count"] == 2 and [e["id"] for e in listed["results"]] == [raw.pk, gold.pk]
    row = listed["results"][0]
    assert (row["kind"], row["filename"], row["records"], row["round"]) == (
        "raw",
        raw.filename,
        raw.records,
        gold_round.pk,
    )
    assert row["created_by"] == "dana" and row["download"].endswith(f"/api/exports/{raw.pk}/download/")
    assert [e["id"] for e in api.get(reverse("api_exports"), {"kind": "emoexpl"}).json()["results"]] == [
        gold.pk
    ]
    bad = api.get(reverse("api_exports"), {"kind": "pdf"})
    assert bad.status_code == 400 and "kind" in bad.json()
    detail = api.get(reverse("api_export", args=[gold.pk])).json()
    assert detail["manifest"] == gold.manifest and detail["jsonl_sha256"] == gold.jsonl_sha256
    assert api.get(reverse("api_export", args=[999_999])).status_code == 404


def test_a_file_gone_from_the_server_is_a_404(api, gold_round):
    job_run(api.post_json("api_job_rawexport", {"round": gold_round.pk}).json()["id"])
    export = Export.objects.get()
    export.path.unlink()
    assert api.get(reverse("api_export_download", args=[export.pk])).status_code == 404
    assert api.get(reverse("api_export_download", args=[999_999])).status_code == 404


def test_the_job_list_filters_by_kind_and_status(api, one_job_of_each_kind):
    _prefill, verify, export = one_job_of_each_kind
    by_kind = api.get(reverse("api_jobs"), {"kind": "verify"}).json()
    assert [j["id"] for j in by_kind["results"]] == [verify.pk]
    by_status = api.get(reverse("api_jobs"), {"status": "failed"}).json()
    assert [j["id"] for j in by_status["results"]] == [export.pk]
    assert api.get(reverse("api_jobs"), {"kind": "prefill", "status": "done"}).json()["count"] == 1
    for bad in ({"kind": "distil"}, {"status": "asleep"}):
        response = api.get(reverse("api_jobs"), bad)
        assert response.status_code == 400 and next(iter(bad)) in response.json()


@pytest.mark.parametrize("who", ["annotator", "adjudicator", None])
def test_only_admins_may_use_the_jobs_api(client, request, gold_round, who):
    if who:
        client.force_login(request.getfixturevalue(who))
    export = Export.objects.create(
        kind="raw", round=gold_round, filename="x.csv", bytes=0, sha256="", jsonl_sha256="", records=0,
        rule_set_version="1", manifest={},
    )  # fmt: skip
    for name in ("api_job_prefill", "api_job_verify", "api_job_export", "api_job_train", "api_job_rawexport"):
        response = client.post(reverse(name), {"round": gold_round.pk}, content_type="application/json")
        assert response.status_code == (403 if who else 401), name
    for url in (reverse("api_jobs"), reverse("api_exports"), reverse("api_export", args=[export.pk]),
                reverse("api_export_download", args=[export.pk])):  # fmt: skip
        assert client.get(url).status_code == (403 if who else 401), url
    assert not Job.objects.exists()


def test_a_queued_job_not_yet_counted_is_at_0_percent_not_100(api, gold_round):
    job = Job.objects.get(pk=api.post_json("api_job_rawexport", {"round": gold_round.pk}).json()["id"])
    body = api.get(reverse("api_job", args=[job.pk])).json()
    assert (body["status"], body["total"], body["percent"]) == ("queued", 0, 0)
    job_run(job.pk)
    body = api.get(reverse("api_job", args=[job.pk])).json()
    assert body["status"] == "done" and body["percent"] == 100
    # a finished job that had nothing to do is all done
    Job.objects.filter(pk=job.pk).update(total=0, done=0)
    assert api.get(reverse("api_job", args=[job.pk])).json()["percent"] == 100


def test_a_job_in_the_wrong_state_for_an_action_is_a_409_from_the_service_itself(api, gold_round):
    """Issue 24: the actions' view answered JobError 409 by hand while the exception handler
    answers it 400, so one error had two statuses; the state error now carries its own 409."""
    job = Job.objects.get(pk=api.post_json("api_job_rawexport", {"round": gold_round.pk}).json()["id"])
    job_run(job.pk)
    answer = api.post(reverse("api_job_cancel", args=[job.pk]))
    assert answer.status_code == 409
    assert "only a queued or running job can be cancelled" in answer.json()["detail"]
    job.refresh_from_db()
    assert job.status == "done" and not job.cancel_requested
    with pytest.raises(JobStateError) as error:
        job_cancel(job=job)
    assert error.value.api_status == 409 and isinstance(error.value, JobError)
    # resuming a job that is not stopped: the same status, and the job is left as it was
    Job.objects.filter(pk=job.pk).update(status="running")
    answer = api.post(reverse("api_job_resume", args=[job.pk]))
    assert answer.status_code == 409 and "can be resumed" in answer.json()["detail"]
    assert Job.objects.get(pk=job.pk).status == "running"


@pytest.fixture
def no_configured_verifier(settings):
    settings.NSM_VERIFIER_MODEL = "nobody/no-such-nli-model"  # a hub name this machine has not cached
    settings.NSM_VERIFIER_DOWNLOAD = False


def test_without_a_configured_verifier_a_verify_job_names_the_model_field(
    api, gold_round, no_configured_verifier
):
    answer = api.post_json("api_job_verify", {"round": gold_round.pk})
    assert answer.status_code == 400
    assert set(answer.json()) == {"model"}  # not "round", which was given
    assert "NSM_VERIFIER_MODEL=nobody/no-such-nli-model" in answer.json()["model"][0]
    assert not Job.objects.exists()


def test_without_a_configured_verifier_a_model_given_is_used(
    api, gold_round, no_configured_verifier, tmp_path
):
    folder = tmp_path / "nli"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    answer = api.post_json("api_job_verify", {"round": gold_round.pk, "model": str(folder)})
    assert answer.status_code == 201, answer.content
    assert Job.objects.get(kind="verify").params["model"] == str(folder)
    answer = api.post_json("api_job_export", {"round": gold_round.pk, "verify": True, "model": str(folder)})
    assert answer.status_code == 201, answer.content
    assert Job.objects.get(kind="export").params == {"model": str(folder), "verify": True}


def test_without_a_configured_verifier_an_export_asked_to_verify_is_refused_naming_verify(
    api, gold_round, no_configured_verifier
):
    answer = api.post_json("api_job_export", {"round": gold_round.pk})
    assert answer.status_code == 400 and "NSM_VERIFIER_MODEL" in answer.json()["verify"][0]
    assert api.post_json("api_job_export", {"round": gold_round.pk, "verify": False}).status_code == 201


@pytest.mark.parametrize(
    ("body", "setting"),
    [
        ({"backend": "transformers"}, "NSM_PARSER_MODEL"),
        ({"backend": "openai"}, "NSM_OPENAI_BASE_URL"),
    ],
)
def test_a_prefill_whose_backend_has_nothing_to_run_is_refused_before_a_job_exists(
    api, prefilled_round, settings, body, setting
):
    """Found by two walkthroughs: these were accepted (201), then failed on the worker, and
    Resume failed again."""
    settings.NSM_PARSER_MODEL = ""
    settings.NSM_OPENAI_BASE_URL = ""
    answer = api.post_json("api_job_prefill", {"item_set": prefilled_round.item_set.pk, **body})
    assert answer.status_code == 400 and setting in answer.json()["detail"]
    assert not Job.objects.filter(kind="prefill").exists()
    # a model given with the job is enough for the transformers backend's check
    if body["backend"] == "transformers":
        given = {"item_set": prefilled_round.item_set.pk, **body, "model": "some-org/some-model"}
        assert api.post_json("api_job_prefill", given).status_code == 201


@pytest.mark.django_db(transaction=True)  # as in production: the job is sent when its row commits
def test_a_job_started_while_the_queue_is_down_is_a_503_naming_it_and_is_kept(api, gold_round, monkeypatch):
    """Issue 24: with the broker down the API answered 201 "queued" for a job already failed."""
    from celery import current_app
    from kombu.exceptions import OperationalError

    def down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app.tasks["jobs.run_job"], "apply_async", down)
    response = api.post(
        "/api/jobs/prefill/", {"round": gold_round.pk, "backend": "lexical"}, content_type="application/json"
    )
    assert response.status_code == 503 and response["Retry-After"] == "30"
    body = response.json()
    job = Job.objects.get(pk=body["job"])
    assert "the job queue cannot be reached" in body["detail"] and "Connection refused" in body["detail"]
    assert (job.status, job.error.startswith("the job queue cannot be reached")) == ("failed", True)
    # a form-started kind answers the same
    response = api.post(
        "/api/jobs/train/", {"round": gold_round.pk, "method": "classifier"}, content_type="application/json"
    )
    assert response.status_code == 503 and Job.objects.get(pk=response.json()["job"]).status == "failed"
    # once the queue is back, the kept job resumes
    monkeypatch.undo()
    assert api.post(f"/api/jobs/{job.pk}/resume/").status_code == 200
    job.refresh_from_db()
    assert job.status in ("queued", "running", "done")
