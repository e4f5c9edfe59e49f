"""Issue 25: trained models are chosen by name from a list, never by pasting a folder on the
server; a choice that cannot run is refused in the form; the train form's default method is the
classifier on a machine without a GPU."""

import pytest
from django.core.management import call_command

from annotator.sampling import item_set_from_items
from jobs.models import Job
from registry.models import RegisteredParser
from tests.registry.test_registry import train
from training.defaults import default_train_method
from training.forms import TrainForm


@pytest.fixture
def registered(gold_round, admin_user, tmp_path):
    train(admin_user, gold_round, tmp_path, parser_name="clf-small")
    return train(admin_user, gold_round, tmp_path, parser_name="clf-small")


@pytest.fixture
def other_set(items):
    return item_set_from_items(name="to-prefill", items=items[:2])


def prefill_form(page: str) -> str:
    start = page.index('id="prefill-form"')
    return page[start : page.index("</form>", start)]


def test_the_prefill_form_lists_trained_parsers_by_name_and_has_no_folder_field(
    admin_client, registered, other_set
):
    form = prefill_form(admin_client.get("/jobs/").content.decode())
    assert 'name="adapter"' not in form
    assert '<select name="parser"' in form
    # each version, by name, under its backend, the newest said; its backend travels with it
    assert '<optgroup label="classifier (scikit-learn, CPU)">' in form
    assert 'value="clf-small@2" selected data-backend="classifier">clf-small@2 (newest): trained on' in form
    assert 'value="clf-small@1" data-backend="classifier">clf-small@1: trained on' in form
    assert RegisteredParser.objects.get(name="clf-small", version=2).folder not in form

    response = admin_client.post(
        "/jobs/start/prefill/",
        {
            "target": f"set:{other_set.pk}",
            "backend": "classifier",
            "parser": "clf-small@1",
            "text_field": "text",
        },
    )
    assert response.status_code == 302
    job = Job.objects.get(kind="prefill")
    assert (job.params["backend"], job.params["model"]) == ("classifier", "clf-small@1")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"backend": "transformers", "model": "/srv/models/adapter"}, "not by a folder on the server"),
        ({"backend": "transformers", "model": "../models/adapter"}, "not by a folder on the server"),
        ({"backend": "classifier", "model": "job-7"}, "no registered parser &#x27;job-7&#x27;"),
        ({"backend": "lexical", "model": "cues.txt"}, "the lexical baseline takes no model"),
        ({"backend": "transformers", "parser": "clf-small@2"}, "clf-small@2 is a classifier parser"),
        ({"backend": "classifier", "parser": "clf-small@2", "model": "x"}, "not both"),
        ({"backend": "classifier", "parser": "nobody@1"}, "Select a valid choice"),
    ],
)
def test_a_folder_or_a_name_that_cannot_run_is_refused_in_the_form(
    admin_client, registered, other_set, values, message
):
    response = admin_client.post(
        "/jobs/start/prefill/", {"target": f"set:{other_set.pk}", "text_field": "text", **values}
    )
    assert response.status_code == 400
    assert message in prefill_form(response.content.decode())
    assert not Job.objects.filter(kind="prefill").exists()


def test_a_backend_with_no_usable_model_is_refused_in_the_form(admin_client, other_set, settings):
    settings.NSM_PARSER_MODEL = ""
    response = admin_client.post(
        "/jobs/start/prefill/",
        {"target": f"set:{other_set.pk}", "text_field": "text", "backend": "transformers"},
    )
    assert response.status_code == 400 and "NSM_PARSER_MODEL" in response.content.decode()
    assert not Job.objects.filter(kind="prefill").exists()


def test_the_api_takes_names_and_refuses_folders_and_adapters(admin_client, registered, other_set):
    def post(body):
        return admin_client.post("/api/jobs/prefill/", body, content_type="application/json")

    for body, field, message in (
        ({"backend": "transformers", "model": "/srv/m", "adapter": "/srv/a"}, "adapter", "registered name"),
        ({"backend": "transformers", "model": "/srv/models/m"}, "model", "not by a folder on the server"),
        ({"backend": "classifier", "model": "job-7"}, "model", "no registered parser 'job-7'"),
    ):
        answer = post({"item_set": other_set.pk, **body})
        assert answer.status_code == 400, answer.json()
        assert message in answer.json()[field][0]
    assert not Job.objects.filter(kind="prefill").exists()
    answer = post({"item_set": other_set.pk, "model": "clf-small"})
    assert answer.status_code == 201
    assert Job.objects.get(kind="prefill").params["model"] == "clf-small"


@pytest.mark.parametrize(
    ("device", "setting", "method"),
    [
        ("cpu", "", "classifier"),
        ("cuda:0", "", "lora"),
        ("cpu", "lora", "lora"),
        ("cuda", "classifier", "classifier"),
    ],
)
def test_the_default_training_method_is_the_classifier_without_a_gpu(db, settings, device, setting, method):
    settings.NSM_PARSER_DEVICE, settings.NSM_TRAIN_METHOD = device, setting
    assert default_train_method() == method
    assert TrainForm().fields["method"].initial == method


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread, on its own connection
def test_the_train_command_defaults_to_the_classifier_without_a_gpu(gold_round, settings, tmp_path):
    settings.NSM_PARSER_DEVICE, settings.NSM_TRAIN_METHOD = "cpu", ""
    settings.NSM_MODEL_DIR = str(tmp_path)
    call_command("train_parser", "--round", gold_round.name)
    assert Job.objects.get(kind="train").params["method"] == "classifier"
    assert RegisteredParser.objects.get().backend == "classifier"
