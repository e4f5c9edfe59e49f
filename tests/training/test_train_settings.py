"""A train job's settings are declared once (TrainParams, with jobs.kinds.setting): the job's own
check, the form, the API and the command read the same bounds, so none accepts what another refuses."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from jobs.kinds import JobError
from jobs.models import Job
from nsmcore.lora import LoraError, LoraSettings
from training.api import TrainIn
from training.forms import TrainForm
from training.params import LORA_FIELDS, METHOD_NAMES, TrainParams
from training.train import METHODS

SETTINGS = [f for f in dataclasses.fields(TrainParams) if "min" in f.metadata]


def test_the_form_and_the_api_take_their_bounds_and_defaults_from_the_parameters(db):
    assert {f.name for f in SETTINGS} >= {"rank", "dropout", "learning_rate", "label_trust", "max_length"}
    form, api = TrainForm().fields, TrainIn().fields
    for field in SETTINGS:
        low, high = field.metadata["min"], field.metadata["max"]
        if isinstance(field.default, bool) or field.name == "checkpoint_every":  # the command's alone
            continue
        assert (form[field.name].min_value, form[field.name].max_value) == (low, high), field.name
        assert (api[field.name].min_value, api[field.name].max_value) == (low, high), field.name
        assert form[field.name].initial == field.default, field.name


def test_the_library_takes_the_same_bounds_and_defaults_as_the_job():
    """Issue 24: nsmcore's LoraSettings (python -m nsmcore.lora) had bounds of its own: it trained
    with a learning rate of 0.7 or a dropout of 0.995 that the form, the API and the command refuse."""
    lora = [f for f in SETTINGS if f.name in LORA_FIELDS]
    assert {f.name for f in lora} >= {"rank", "dropout", "learning_rate", "max_length", "checkpoint_every"}
    for field in lora:
        low, high = field.metadata["min"], field.metadata["max"]
        assert getattr(LoraSettings(), field.name) == field.default, field.name
        if isinstance(field.default, bool):
            continue
        step = 1 if isinstance(field.default, int) else 1e-9
        for inside in (low, high):
            if inside is not None:
                assert getattr(LoraSettings(**{field.name: inside}), field.name) == inside
        for outside in (low - step, None if high is None else high + step):
            if outside is None:
                continue
            with pytest.raises(LoraError, match=field.name):
                LoraSettings(**{field.name: outside})
            with pytest.raises(JobError, match=field.name):
                TrainParams(base_model="org/m", **{field.name: outside})


@pytest.mark.parametrize(
    "name, value, bound", [("learning_rate", 0.9, "at most 0.5"), ("rank", 0, "at least 1")]
)
def test_a_value_out_of_bounds_is_refused_by_the_job_the_form_the_api_and_the_command(
    name, value, bound, gold_round, client, admin_user
):
    with pytest.raises(JobError, match=f"{name}.*must be {bound}"):
        TrainParams(base_model="org/m", **{name: value})

    data = {"target": f"round:{gold_round.pk}", "passes": "gold", "method": "lora", "base_model": "org/m"}
    form = TrainForm({**data, name: value})
    assert not form.is_valid() and name in form.errors

    client.force_login(admin_user)
    body = {"round": gold_round.pk, "base_model": "org/m", name: value}
    answer = client.post(reverse("api_job_train"), body, content_type="application/json")
    assert answer.status_code == 400 and name in answer.json()

    flag = "--" + name.replace("_", "-")
    with pytest.raises(CommandError, match=f"{name}.*must be {bound}") as refused:
        call_command("train_parser", "--round", gold_round.name, "--base", "org/m", flag, str(value))
    assert refused.value.returncode == 2
    assert not Job.objects.exists()


def test_the_params_name_the_methods_the_job_runs():
    assert tuple(METHODS) == METHOD_NAMES


@pytest.mark.parametrize(
    "name, value", [("epochs", 10**20), ("rank", 10**20), ("seed", 2**32), ("batch_size", 2**40)]
)
def test_a_setting_beyond_what_training_can_take_is_refused_before_a_job_exists(
    name, value, gold_round, client, admin_user
):
    """Found by a new user's walk through the site: 10**20 epochs was a 500 on the Jobs page, and
    a seed of 2**32 made a job that failed (random_state must be below 2**32)."""
    client.force_login(admin_user)
    data = {"target": f"round:{gold_round.pk}", "passes": "gold", "method": "lora", "base_model": "org/m"}
    response = client.post(reverse("job_start", args=["train"]), {**data, name: value})
    assert response.status_code == 400 and name in response.content.decode()
    body = {"round": gold_round.pk, "base_model": "org/m", name: value}
    answer = client.post(reverse("api_job_train"), body, content_type="application/json")
    assert answer.status_code == 400 and name in answer.json()
    assert not Job.objects.exists()
