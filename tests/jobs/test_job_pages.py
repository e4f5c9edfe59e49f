"""The jobs pages as an admin sees them: the list with a job of every kind, and the way the
verify and export forms say that no verifier model is usable instead of hanging a request."""

from html.parser import HTMLParser

import pytest

from jobs.models import Job

#: the controls that need no label of their own
UNLABELLED_TYPES = ("hidden", "submit", "button", "reset", "image")


class _Ids(HTMLParser):
    """Every element's id, every ``<label for>``, and the ids of the controls a reader fills in."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.labelled: set[str] = set()
        self.controls: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.append(attrs["id"])
        if tag == "label" and attrs.get("for"):
            self.labelled.add(attrs["for"])
        filled_in = tag in ("select", "textarea") or attrs.get("type", "text") not in UNLABELLED_TYPES
        if tag in ("input", "select", "textarea") and attrs.get("id") and filled_in:
            self.controls.append(attrs["id"])


def id_problems(page: str) -> list[str]:
    """What keeps a page's forms from being read by a screen reader: an id given twice (a label
    then names only the first control of that id) and a control no ``<label for>`` names."""
    found = _Ids()
    found.feed(page)
    repeated = sorted({i for i in found.ids if found.ids.count(i) > 1})
    return [f"id {i!r} repeats" for i in repeated] + [
        f"control {i!r} has no label" for i in found.controls if i not in found.labelled
    ]


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


def test_each_start_form_on_the_jobs_page_has_ids_of_its_own_and_labels_them(
    client, admin_user, prefilled_round, settings
):
    """Every kind's start form sits on one page (in closed disclosures): with Django's default ids
    they repeated (id_target, id_model, ...) and a label focused another form's control."""
    settings.NSM_VERIFIER_MODEL = ""
    client.force_login(admin_user)
    page = client.get("/jobs/").content.decode()
    assert 'id="verify-form"' in page and 'id="train-form"' in page
    assert id_problems(page) == []
    # the refused form, shown again with a 400, keeps the same ids as the others around it
    response = client.post("/jobs/start/verify/", {"target": "nowhere", "text_field": "text"})
    assert response.status_code == 400
    refused = response.content.decode()
    assert id_problems(refused) == []
    assert 'id="id_verify_target"' in refused and 'for="id_verify_target"' in refused


def test_a_jobs_page_links_to_the_page_its_kind_names_for_its_results(
    client, admin_user, one_job_of_each_kind
):
    """An export's page links to the exports' history (its kind's results_page), a prefill's to
    none: the jobs machinery names no kind, each kind says what it adds."""
    prefill, _, export = one_job_of_each_kind
    client.force_login(admin_user)

    def links(job: Job) -> str:  # the line above the job's heading
        page = client.get(f"/jobs/{job.pk}/").content.decode()
        return page[page.index('<p><a href="/jobs/">') : page.index("<h1>")]

    assert links(export).count("<a ") == 2 and '<a href="/exports/">Exports</a>' in links(export)
    assert links(prefill).count("<a ") == 1


@pytest.fixture
def no_network(monkeypatch):
    """A page that tried to reach the Hugging Face hub would wait for half a minute offline: any
    connection attempt fails the test at once instead."""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("the page tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def uncached_model(settings, no_network):
    settings.NSM_VERIFIER_MODEL = "nobody/no-such-nli-model"
    settings.NSM_VERIFIER_DOWNLOAD = False
    return settings.NSM_VERIFIER_MODEL


@pytest.fixture
def sentiment_model(tmp_path):
    """A model folder that exists but cannot verify: its labels name no entailment."""
    pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")
    from nsmcore.tiny import build_tiny_nli

    return str(build_tiny_nli(tmp_path / "sentiment", labels=("negative", "positive")))


def test_without_a_usable_model_the_export_form_starts_unticked_and_says_why(
    client, admin_user, gold_round, uncached_model, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    client.force_login(admin_user)
    page = client.get("/exports/").content.decode()
    box = page[page.index('name="verify"') - 40 : page.index('name="verify"') + 80]
    assert "checked" not in box and "disabled" not in box
    assert 'id="export-verify-off"' in page
    assert "NSM_VERIFIER_MODEL=nobody/no-such-nli-model" in page
    assert "is not in the local Hugging Face cache and downloads are off" in page

    # ticked without a model: refused with the reason, no job; unticked: exported unverified
    refused = client.post("/exports/", {"round": gold_round.pk, "verify": "on"})
    assert refused.status_code == 400 and "or export without verification" in refused.content.decode()
    assert not Job.objects.filter(kind="export").exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/exports/", {"round": gold_round.pk})
    assert response.status_code == 302
    job = Job.objects.get(kind="export")
    assert job.params == {"model": "", "verify": False} and job.status == "done"
    detail = client.get(response["Location"]).content.decode()
    assert "Lines exported without verification." in detail and 'id="export-download"' in detail


def test_without_a_usable_model_the_verify_form_names_the_setting_and_takes_a_model(
    client, admin_user, prefilled_round, uncached_model, tmp_path
):
    client.force_login(admin_user)
    page = client.get("/jobs/").content.decode()
    form = page[page.index('id="verify-form"') : page.index("</form>", page.index('id="verify-form"'))]
    assert form.count("NSM_VERIFIER_MODEL=nobody/no-such-nli-model") == 1
    assert '<button type="submit">Start verification</button>' in form and "disabled" not in form

    response = client.post(
        "/jobs/start/verify/", {"target": f"round:{prefilled_round.pk}", "model": "", "text_field": "text"}
    )
    assert response.status_code == 400
    page = response.content.decode()
    start = page.index('id="start-verify"')
    section = page[start : page.index("</details>", start)]
    assert section.startswith('id="start-verify" open>')  # the refused form is the one shown open
    assert section.count("NSM_VERIFIER_MODEL=nobody/no-such-nli-model") == 1
    assert not Job.objects.filter(kind="verify").exists()

    folder = tmp_path / "nli"
    folder.mkdir()
    (folder / "config.json").write_text("{}")  # what is checked before a job exists
    response = client.post(
        "/jobs/start/verify/",
        {"target": f"round:{prefilled_round.pk}", "model": str(folder), "text_field": "text"},
    )
    assert response.status_code == 302
    assert Job.objects.get(kind="verify").params["model"] == str(folder)


def test_a_refused_model_folder_is_named_once_on_the_export_page(
    client, admin_user, gold_round, no_network, sentiment_model, settings
):
    settings.NSM_VERIFIER_MODEL = sentiment_model  # verification is on; the form names another model
    client.force_login(admin_user)
    response = client.post("/exports/", {"round": gold_round.pk, "verify": "on", "model": "/models/none"})
    assert response.status_code == 400
    page = response.content.decode()
    assert page.count("no model folder at /models/none") == 1
    assert "export without verification" in page
    assert not Job.objects.exists()


def test_a_model_that_cannot_be_loaded_fails_the_export_job_not_the_request(
    client, admin_user, gold_round, sentiment_model, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    settings.NSM_VERIFIER_MODEL = sentiment_model
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post("/exports/", {"round": gold_round.pk, "verify": "on", "model": ""})
    assert response.status_code == 302  # the request only queued the job: nothing was loaded
    job = Job.objects.get(kind="export")
    assert job.status == "queued" and len(queued) == 1
    queued[0]()  # the worker's turn (tasks run inline in the tests)
    job.refresh_from_db()
    assert job.status == "failed"
    assert "no entailment label" in job.error and "NSM_VERIFIER_MODEL" in job.error
    assert "export without verification" in job.error and "--no-verify" in job.error
    assert not job.error.startswith("unexpected error")
    page = client.get(response["Location"]).content.decode()
    assert page.count("no entailment label") == 1  # the job's error, not again in messages
    assert 'id="job-error"' in page and 'class="messages"' not in page


def test_a_model_that_cannot_be_loaded_fails_the_verify_job_with_the_setting_named(
    client, admin_user, prefilled_round, sentiment_model, settings, django_capture_on_commit_callbacks
):
    from adjudication.gold.services import gold_sync

    settings.NSM_VERIFIER_MODEL = sentiment_model
    gold_sync(prefilled_round)
    client.force_login(admin_user)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(
            "/jobs/start/verify/",
            {"target": f"round:{prefilled_round.pk}", "model": "", "text_field": "text"},
        )
    assert response.status_code == 302
    job = Job.objects.get(kind="verify")
    assert job.status == "queued"
    queued[0]()
    job.refresh_from_db()
    assert job.status == "failed" and "no entailment label" in job.error
    assert "set NSM_VERIFIER_MODEL to a local NLI model folder" in job.error
    page = client.get(response["Location"]).content.decode()
    assert page.count("no entailment label") == 1


def test_a_refused_cancel_is_said_once_in_the_fragment_and_not_again_on_the_next_page(
    client, admin_user, one_job_of_each_kind
):
    prefill, _, _ = one_job_of_each_kind  # done: nothing to cancel
    client.force_login(admin_user)
    response = client.post(f"/jobs/{prefill.pk}/cancel/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200  # htmx swaps the fragment, reason included
    fragment = response.content.decode()
    assert 'id="job-status"' in fragment and "<html" not in fragment
    assert fragment.count("only a queued or running job can be cancelled") == 1
    prefill.refresh_from_db()
    assert prefill.status == "done"
    page = client.get(f"/jobs/{prefill.pk}/").content.decode()
    assert "only a queued or running job can be cancelled" not in page  # no stale message later


def test_a_queued_job_waits_for_a_worker_instead_of_showing_a_full_bar(client, admin_user, prefilled_round):
    job = Job.objects.create(
        kind="export", scope_key="all|export", round=prefilled_round,
        params={"model": "", "verify": False}, created_by=admin_user,
    )  # fmt: skip
    client.force_login(admin_user)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Waiting for a worker to start it" in page
    assert "(100%)" not in page and 'value="0"' not in page
    assert 'href="/exports/"' in page  # an export's page leads back to the exports
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, total=4, done=1)
    page = client.get(f"/jobs/{job.pk}/status/").content.decode()
    assert "1 / 4" in page and "(25%)" in page and "Waiting" not in page
