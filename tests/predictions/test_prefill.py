"""Prefill jobs, run inline (the worker's code path without the broker): predictions, progress,
re-runs, cancel, resume, failures, legality, permissions."""

import json

import pytest
from django.urls import reverse

from annotator.models import ParserPrediction, Round
from annotator.sampling import item_set_from_items
from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import JobConflict, job_cancel, job_resume, job_run
from nsmcore.parsers import ParseResult
from predictions.parsers import parser_build
from predictions.prefill import job_prefill_start
from predictions.selectors import legality_report
from tests.explications import PRIDE
from tests.factories import make_items
from tests.fake_openai import FakeChatServer, text_of


@pytest.fixture
def item_set(db):
    return item_set_from_items(name="twelve", items=make_items(n_copies=3))


@pytest.fixture
def small_batches(settings):
    settings.NSM_JOB_BATCH_SIZE = 5


def start(admin_client, django_capture_on_commit_callbacks, **data):
    with django_capture_on_commit_callbacks(execute=True):
        return admin_client.post(reverse("job_start", args=["prefill"]), data)


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


def test_an_admin_starts_a_prefill_and_every_item_gets_one_prediction(
    admin_client, item_set, django_capture_on_commit_callbacks
):
    response = start(
        admin_client, django_capture_on_commit_callbacks, target=f"set:{item_set.pk}", backend="lexical",
        text_field="text",
    )  # fmt: skip
    job = Job.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("job_detail", args=[job.pk])
    assert (job.status, job.done, job.total, job.legal, job.illegal) == ("done", 12, 12, 12, 0)
    predictions = ParserPrediction.objects.filter(job=job)
    assert predictions.count() == 12
    one = predictions.first()
    assert one.parser == "lexical"
    assert one.parser_version == job.engine_version
    assert one.legal and one.explication["experiencer"] in ("i", "someone", "people")
    assert json.loads(one.raw_output)["body"]["value"] in ("yes", "no")
    assert one.seconds is not None
    page = admin_client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "12 / 12" in page
    assert "12 of 12 predictions legal (100%)" in page
    assert 'hx-trigger="every 1s"' not in page  # a finished job is not polled


def test_running_again_adds_no_duplicates_and_overwrite_replaces(item_set, admin_user):
    first = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    job_run(first.pk)
    ids = set(ParserPrediction.objects.values_list("id", flat=True))
    again = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    job_run(again.pk)
    again.refresh_from_db()
    assert (again.status, again.skipped, again.done, again.legal) == ("done", 12, 12, 0)
    assert set(ParserPrediction.objects.values_list("id", flat=True)) == ids
    replace = job_prefill_start(user=admin_user, item_set=item_set, overwrite=True, enqueue=False)
    job_run(replace.pk)
    assert ParserPrediction.objects.count() == 12
    assert not ids & set(ParserPrediction.objects.values_list("id", flat=True))


def test_a_second_active_job_on_the_same_scope_is_refused_with_the_first_named(
    item_set, admin_user, settings
):
    first = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    with pytest.raises(JobConflict, match=f"job #{first.pk} is already queued"):
        job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    # another backend on the same set is another job
    settings.NSM_OPENAI_BASE_URL, settings.NSM_OPENAI_MODEL = "http://127.0.0.1:9/v1", "m"
    job_prefill_start(user=admin_user, item_set=item_set, backend="openai", enqueue=False)


def test_the_page_shows_a_conflict_as_409_with_a_link(admin_client, item_set, admin_user):
    first = job_prefill_start(user=admin_user, item_set=item_set, backend="lexical", enqueue=False)
    response = admin_client.post(
        reverse("job_start", args=["prefill"]),
        {"target": f"set:{item_set.pk}", "backend": "lexical", "text_field": "masked_text"},
    )
    assert response.status_code == 409
    assert reverse("job_detail", args=[first.pk]) in response.content.decode()
    # reading the other text is another job (its predictions are others): not a conflict
    response = admin_client.post(
        reverse("job_start", args=["prefill"]),
        {"target": f"set:{item_set.pk}", "backend": "lexical", "text_field": "text"},
    )
    assert response.status_code == 302


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "choose an item set or a round"),
        ({"backend": "gpt"}, "unknown parser backend 'gpt'"),
        ({"text_field": "title"}, "unknown text field 'title'"),
    ],
)
def test_bad_job_parameters_are_named(item_set, admin_user, kwargs, message):
    if kwargs:
        kwargs["item_set"] = item_set
    with pytest.raises(JobError, match=message):
        job_prefill_start(user=admin_user, enqueue=False, **kwargs)
    assert not Job.objects.exists()


class CancellingParser:
    """The lexical parser, but the admin presses Cancel while the first batch is being parsed."""

    def __init__(self, job_id):
        self.inner = parser_build(backend="lexical")
        self.name, self.version, self.job_id = self.inner.name, self.inner.version, job_id

    def parse(self, texts):
        job_cancel(job=Job.objects.get(pk=self.job_id))
        return self.inner.parse(texts)


def test_cancel_stops_after_the_current_batch_and_resume_finishes_without_duplicates(
    item_set, admin_user, small_batches, monkeypatch
):
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    with monkeypatch.context() as patch:
        patch.setattr("predictions.prefill.parser_factory", lambda **kw: CancellingParser(job.pk))
        job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("cancelled", 5)
    assert ParserPrediction.objects.count() == 5  # the batch in hand is kept
    job_resume(job=job)
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.skipped) == ("done", 12, 0)  # its own 5 are not skipped
    assert ParserPrediction.objects.count() == 12


def test_a_queued_job_cancels_at_once_and_a_finished_one_cannot_be_cancelled(item_set, admin_user):
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    assert job_cancel(job=job).status == "cancelled"
    job_run(job.pk)  # a late delivery of the task does nothing
    assert not ParserPrediction.objects.exists()
    with pytest.raises(JobError, match="only a queued or running job can be cancelled"):
        job_cancel(job=job)


def legal_unless(bad_texts):
    def reply(payload):
        if text_of(payload) in bad_texts:
            return {**PRIDE.slots(), "knowledge": "knew-it"}
        return PRIDE.slots()

    return reply


@pytest.fixture
def openai_settings(settings):
    settings.NSM_OPENAI_MODEL = "fake-model"
    settings.NSM_OPENAI_RETRIES = 0
    settings.NSM_OPENAI_CONCURRENCY = 2
    return settings


def test_one_illegal_output_is_recorded_and_the_job_goes_on(item_set, admin_user, openai_settings):
    bad = {"I was happy when it snowed on my birthday."}
    with FakeChatServer(legal_unless(bad)) as server:
        openai_settings.NSM_OPENAI_BASE_URL = server.base_url
        # the generated text: the fake server recognises the texts as written
        job = job_prefill_start(
            user=admin_user, item_set=item_set, backend="openai", text_field="text", enqueue=False
        )
        job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.legal, job.illegal) == ("done", 9, 3)
    illegal = ParserPrediction.objects.filter(legal=False)
    assert illegal.count() == 3
    assert illegal.first().explication is None
    assert '"knew-it"' in illegal.first().raw_output
    report = legality_report(job)
    assert (report.parsed, report.legal) == (12, 9)
    assert report.illegal_values == [("knowledge", "knew-it", 3)]
    assert job.engine == "openai:fake-model"


def test_a_server_that_dies_fails_the_job_with_its_reason_and_keeps_the_work_done(
    item_set, admin_user, openai_settings, small_batches, admin_client
):
    calls = []
    recovered = []

    def reply(payload):
        calls.append(1)
        return PRIDE.slots() if len(calls) <= 5 or recovered else (503, "overloaded")

    with FakeChatServer(reply) as server:
        openai_settings.NSM_OPENAI_BASE_URL = server.base_url
        job = job_prefill_start(user=admin_user, item_set=item_set, backend="openai", enqueue=False)
        job_run(job.pk)
        job.refresh_from_db()
        assert job.status == "failed"
        assert "HTTP 503: overloaded" in job.error
        assert "5 items parsed before the failure are kept" in job.error
        assert ParserPrediction.objects.count() == 5
        page = admin_client.get(reverse("job_detail", args=[job.pk])).content.decode()
        assert "HTTP 503: overloaded" in page
        assert "Resume" in page

        recovered.append(True)
        job_resume(job=job)
        job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.skipped, job.error) == ("done", 12, 0, "")  # its own 5: done
    assert ParserPrediction.objects.count() == 12


def test_a_bad_model_path_fails_the_job_with_the_path_named(item_set, admin_user):
    job = job_prefill_start(
        user=admin_user, item_set=item_set, backend="transformers", model="/models/missing", enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == "cannot load the causal LM: no model folder at /models/missing"
    assert not ParserPrediction.objects.exists()


def test_a_round_prefill_reads_the_round_text_and_feeds_the_annotation_form(
    prefilled_round, admin_user, annotator, client
):
    job = job_prefill_start(user=admin_user, round_=prefilled_round, enqueue=False)
    job_run(job.pk)
    prefilled_round.refresh_from_db()
    assert prefilled_round.prefill_parser == "lexical"
    masked = ParserPrediction.objects.filter(job=job).select_related("item").first()
    assert masked.item.masked_text  # the round shows masked text, so the parser read it too
    assert json.loads(masked.raw_output) == json.loads(
        parser_build(backend="lexical").parse([masked.item.masked_text])[0].raw_output
    )
    client.force_login(annotator)
    page = client.get(reverse("round_next", args=[prefilled_round.pk]), follow=True).content.decode()
    assert "prefilled" in page


class Recording:
    def __init__(self):
        self.texts = []
        self.inner = parser_build(backend="lexical")
        self.name, self.version = self.inner.name, self.inner.version

    def parse(self, texts):
        self.texts.extend(texts)
        return [ParseResult(r.explication, r.raw_output, r.errors) for r in self.inner.parse(texts)]


def test_an_item_set_prefill_reads_the_chosen_text_field(item_set, admin_user, monkeypatch):
    job = job_prefill_start(user=admin_user, item_set=item_set, text_field=Round.TEXT_MASKED, enqueue=False)
    parser = Recording()
    monkeypatch.setattr("predictions.prefill.parser_factory", lambda **kw: parser)
    job_run(job.pk)
    assert all("..." in text for text in parser.texts)


def test_a_stalled_job_can_be_resumed(item_set, admin_user, settings):
    settings.NSM_JOB_STALL_SECONDS = 0
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    Job.objects.filter(pk=job.pk).update(status="running")  # a worker that died mid-job
    job.refresh_from_db()
    assert job.stalled and job.can_resume
    job_resume(job=job)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done"


@pytest.mark.parametrize("persona", ["annotator", "adjudicator", "outsider"])
def test_only_admins_reach_jobs_by_page_or_api(client, persona, request, item_set, admin_user):
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    client.force_login(request.getfixturevalue(persona))
    for url in [reverse("jobs"), reverse("job_detail", args=[job.pk]), reverse("job_status", args=[job.pk])]:
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("job_cancel", args=[job.pk])).status_code == 403
    assert client.get(reverse("api_jobs")).status_code == 403
    assert client.post(reverse("api_job_prefill"), {"item_set": item_set.pk}).status_code == 403
    assert client.post(reverse("api_job_cancel", args=[job.pk])).status_code == 403
    job.refresh_from_db()
    assert job.status == "queued"


def test_the_api_starts_reads_and_cancels_jobs(
    client, admin_user, item_set, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("api_job_prefill"), {"item_set": item_set.pk}, content_type="application/json"
        )
    assert response.status_code == 201, response.content
    assert (response.json()["status"], response.json()["total"]) == ("queued", 12)  # as it was sent
    body = client.get(reverse("api_job", args=[response.json()["id"]])).json()
    assert (body["status"], body["done"], body["total"], body["percent"]) == ("done", 12, 12, 100)
    assert (body["engine"], body["params"]["backend"]) == ("lexical", "lexical")
    assert body["engine_version"] and "parser_name" not in body
    legality = client.get(reverse("api_job_legality", args=[body["id"]])).json()
    assert (legality["parsed"], legality["legal"], legality["share_legal"]) == (12, 12, 1.0)
    assert client.post(reverse("api_job_cancel", args=[body["id"]])).status_code == 409
    both = client.post(
        reverse("api_job_prefill"), {"item_set": item_set.pk, "round": 1}, content_type="application/json"
    )
    assert both.status_code == 400


@pytest.mark.parametrize(
    ("seconds", "text"), [(None, "-"), (4.4, "4 s"), (125, "2 min 05 s"), (7380, "2 h 03 min")]
)
def test_durations_read_as_a_person_would_say_them(seconds, text):
    from jobs.templatetags.jobs_extras import duration

    assert duration(seconds) == text


def test_a_prefill_job_runs_the_classifier_parser_from_its_folder(item_set, admin_user, tmp_path):
    """The classifier backend is a prefill backend like the others: the job's model field is the
    folder a training wrote, and the predictions name that folder and its data hash."""
    from nsmcore.parsers.classifier_training import train_classifier
    from nsmcore.schema import Explication

    proud = Explication(evaluation="feel-good", eval_target="self", agency="i").as_dict()
    sorry = Explication(evaluation="feel-bad", eval_target="self", agency="i").as_dict()
    examples = [(f"I was proud of what I made {k}", proud) for k in range(6)]
    examples += [(f"I was sorry for what I broke {k}", sorry) for k in range(6)]
    folder = tmp_path / "clf"
    train_classifier(examples, seed=0).save(folder)
    job = job_prefill_start(
        user=admin_user, item_set=item_set, backend="classifier", model=str(folder), enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.legal) == ("done", 12, 12), job.error
    predictions = ParserPrediction.objects.filter(job=job)
    assert predictions.count() == 12
    assert {p.parser for p in predictions} == {f"classifier:{folder}"}
    assert all(p.legal and p.explication["evaluation"] in ("feel-good", "feel-bad") for p in predictions)
    assert job.engine == f"classifier:{folder}" and job.engine_version.startswith("data-")


def test_a_prefill_job_with_a_missing_classifier_folder_is_refused_before_it_exists(
    item_set, admin_user, tmp_path
):
    before = Job.objects.count()
    with pytest.raises(
        JobError, match=r"no classifier model folder at .*none \(no card.json\); registered: none yet"
    ):
        job_prefill_start(
            user=admin_user,
            item_set=item_set,
            backend="classifier",
            model=str(tmp_path / "none"),
            enqueue=False,
        )
    assert Job.objects.count() == before


def test_a_prefill_job_with_a_damaged_classifier_folder_fails_naming_the_setting(
    item_set, admin_user, tmp_path
):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "card.json").write_text("{}")
    job = job_prefill_start(
        user=admin_user, item_set=item_set, backend="classifier", model=str(tmp_path / "bad"), enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "model" in job.error.lower()
    assert not ParserPrediction.objects.filter(job=job).exists()


def test_a_resumed_overwrite_goes_on_where_it_stopped_and_its_own_items_are_not_skipped(
    item_set, admin_user, small_batches, monkeypatch
):
    """Issue 24: the deploy guide says a resumed job goes on where it stopped; an overwrite
    prefill parsed every item again, and a resumed job counted its own earlier items as skipped."""
    job_run(job_prefill_start(user=admin_user, item_set=item_set, enqueue=False).pk)  # an earlier prefill
    job = job_prefill_start(user=admin_user, item_set=item_set, overwrite=True, enqueue=False)
    with monkeypatch.context() as patch:
        patch.setattr("predictions.prefill.parser_factory", lambda **kw: CancellingParser(job.pk))
        job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("cancelled", 5)
    parser = Recording()
    monkeypatch.setattr("predictions.prefill.parser_factory", lambda **kw: parser)
    job_resume(job=job)
    job_run(job.pk)
    job.refresh_from_db()
    assert len(parser.texts) == 7  # the 7 it had not reached, not all 12 again
    assert (job.status, job.done, job.skipped) == ("done", 12, 0)
    assert ParserPrediction.objects.filter(job=job).count() == 12 and ParserPrediction.objects.count() == 12


def test_a_job_that_cannot_succeed_offers_no_resume_and_says_why(
    item_set, admin_user, client, openai_settings
):
    """A failed prefill whose backend has lost what it runs with (here the server setting) would
    fail again at once: the page offers no Resume, names the setting, and resuming is refused."""
    openai_settings.NSM_OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    job = job_prefill_start(user=admin_user, item_set=item_set, backend="openai", enqueue=False)
    Job.objects.filter(pk=job.pk).update(status="failed", error="the server did not answer")
    client.force_login(admin_user)
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert reverse("job_resume", args=[job.pk]) in page  # the server may be back: Resume is offered
    openai_settings.NSM_OPENAI_BASE_URL = ""
    page = client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert reverse("job_resume", args=[job.pk]) not in page
    assert "cannot resume: the openai parser cannot run: no server given: set NSM_OPENAI_BASE_URL" in page
    with pytest.raises(JobError, match="no server given: set NSM_OPENAI_BASE_URL"):
        job_resume(job=Job.objects.get(pk=job.pk))
    answer = client.post(reverse("api_job_resume", args=[job.pk]))
    assert answer.status_code == 409 and "NSM_OPENAI_BASE_URL" in answer.json()["detail"]
    assert Job.objects.get(pk=job.pk).status == "failed"
