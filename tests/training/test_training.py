"""Train jobs on a tiny random Llama built here: a round's gold trains an adapter (steps, loss
curve, card), a prefill job then parses with base + adapter and its predictions name the adapter;
cancel checkpoints and resume goes on; held-out items are refused (form, command, download);
the commands and the gold page's download."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.models import Item, ItemSet, ParserPrediction
from annotator.sampling import item_set_from_items
from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import job_resume, job_run
from nsmcore.lora import CARD, last_checkpoint
from nsmcore.parsers.prompt import slot_prompt
from nsmcore.schema import SLOT_NAMES
from nsmcore.tiny import build_tiny_causal_lm
from predictions.prefill import job_prefill_start
from training.train import job_train_start

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")

# 4 gold items, one with two construals: 5 explications, 60 slot examples, 2 steps an epoch
FAST = {"rank": 4, "alpha": 8, "dropout": 0.0, "epochs": 1, "learning_rate": 1e-2, "batch_size": 30}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return str(build_tiny_causal_lm(tmp_path_factory.mktemp("tiny-base"), seed=7))


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def held_out(gold_round):
    """One of the round's items is also in the held-out evaluation set."""
    item = Item.objects.get(source_id="t2-0")
    return item_set_from_items(name="eval-36", items=[item], tier=ItemSet.Tier.EVAL)


def test_a_train_job_trains_an_adapter_and_a_prefill_job_uses_it(
    gold_round, admin_user, admin_client, base, tmp_path
):
    out = tmp_path / "adapter"
    job = job_train_start(
        user=admin_user, round_=gold_round, base_model=base, output_dir=str(out), enqueue=False, **FAST
    )
    assert (job.kind, job.total, job.unit) == ("train", 2, "steps")
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.error) == ("done", 2, 2, "")
    assert [s for s, _ in job.summary["curve"]] == [1, 2]
    assert job.summary["data"]["records"] == 5 and job.summary["data"]["items"] == 4
    card = json.loads((out / CARD).read_text())
    assert card["base_model"] == base and card["steps"] == 2
    assert card["data"]["rule_set_version"] == "1" and card["data"]["round"]["name"] == gold_round.name
    assert card["data"]["job"] == job.pk
    # the frozen data: the decoder's prompts, in the round's text field (masked)
    rows = [json.loads(line) for line in (out / "data" / "train.prompt.jsonl").read_text().splitlines()]
    assert len(rows) == 60
    first = Item.objects.get(source_id=rows[0]["id"])
    assert rows[0]["prompt"] == slot_prompt(first.masked_text, {})
    assert [r["slot"] for r in rows[:12]] == list(SLOT_NAMES)

    page = admin_client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert 'id="loss-curve"' in page and "<polyline" in page
    assert "2 / 2</strong> steps" in page
    assert str(out) in page

    prefill = job_prefill_start(
        user=admin_user,
        round_=gold_round,
        backend="transformers",
        model=base,
        adapter=str(out),
        enqueue=False,
    )
    job_run(prefill.pk)
    prefill.refresh_from_db()
    assert prefill.status == "done", prefill.error
    names = set(ParserPrediction.objects.filter(job=prefill).values_list("parser", "parser_version"))
    assert names == {(f"transformers:{base}+{out}", prefill.engine_version)}
    assert f"+a{card['adapter_digest']}" in prefill.engine_version
    assert ParserPrediction.objects.filter(job=prefill, legal=True).count() == 4

    # the adapter is registered: a prefill takes it by name, and its predictions carry the name
    from registry.models import RegisteredParser
    from registry.selectors import trained_ids

    registered = RegisteredParser.objects.get(job_id=job.pk)
    assert (registered.backend, job.summary["registered"]) == ("transformers", registered.spec)
    assert registered.trained_count == 4 and registered.card["adapter_digest"] == card["adapter_digest"]
    by_name = job_prefill_start(
        user=admin_user, round_=gold_round, backend="transformers", model=registered.spec, enqueue=False
    )
    job_run(by_name.pk)
    by_name.refresh_from_db()
    assert by_name.status == "done", by_name.error
    assert by_name.engine == f"transformers:{registered.spec}"
    rows = ParserPrediction.objects.filter(job=by_name)
    assert set(rows.values_list("parser", flat=True)) == {registered.parser_name} and rows.count() == 4
    raw = json.loads(rows.first().raw_output)
    assert raw["decoding"] == "joint" and "label_mass" in raw and "mean_logprob" in raw
    assert trained_ids(registered.parser_name) == {
        (i.source, i.source_id) for i in Item.objects.filter(item_sets=gold_round.item_set)
    }


def test_cancel_keeps_a_checkpoint_and_resume_goes_on(
    gold_round, admin_user, base, django_capture_on_commit_callbacks
):
    job = job_train_start(user=admin_user, round_=gold_round, base_model=base, enqueue=False, **FAST)
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)  # asked while the first step runs
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("cancelled", 1)
    from django.conf import settings

    folder = Path(settings.NSM_MODEL_DIR) / f"job-{job.pk}"
    assert last_checkpoint(folder).name == "step-0000001"
    assert not (folder / CARD).exists()
    with django_capture_on_commit_callbacks(execute=True):
        job_resume(job=job)  # the worker (eager in tests) runs it at once
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("done", 2, 2)
    card = json.loads((folder / CARD).read_text())
    assert [s for s, _ in card["losses"]] == [1, 2]


def test_held_out_items_are_refused_everywhere_with_their_ids(
    held_out, gold_round, admin_user, admin_client, base
):
    with pytest.raises(JobError, match="held-out \\(eval tier\\) item cannot be training data: t2-0"):
        job_train_start(user=admin_user, round_=gold_round, base_model=base, enqueue=False)
    response = admin_client.post(
        reverse("job_start", args=["train"]),
        {"target": f"round:{gold_round.pk}", "passes": "gold", "method": "lora", "base_model": base,
         "rank": 4, "alpha": 8, "dropout": 0, "epochs": 1, "learning_rate": 0.01, "batch_size": 4,
         "grad_accum": 1, "max_length": 1024, "seed": 0},
    )  # fmt: skip
    assert response.status_code == 400
    assert "t2-0" in response.content.decode()
    assert not Job.objects.filter(kind="train").exists()
    download = admin_client.get(reverse("gold_training", args=[gold_round.pk]))
    assert download.status_code == 400 and "t2-0" in download.content.decode()
    page = admin_client.get(reverse("gold_list", args=[gold_round.pk])).content.decode()
    assert "held-out (eval tier) item cannot be training data: t2-0" in page
    with pytest.raises(CommandError, match="t2-0") as error:
        call_command("export_training", "--round", gold_round.name, "--out", "/tmp/never-written.jsonl")
    assert error.value.returncode == 2
    assert not Path("/tmp/never-written.jsonl").exists()


def test_the_form_starts_a_train_job(
    gold_round, admin_client, base, django_capture_on_commit_callbacks, tmp_path
):
    data = {
        "target": f"round:{gold_round.pk}", "passes": "gold", "method": "lora", "base_model": base,
        "output_dir": str(tmp_path / "a"), "rank": 4, "alpha": 8, "dropout": 0, "epochs": 1,
        "learning_rate": 0.01, "batch_size": 30, "grad_accum": 1, "max_length": 1024, "seed": 0,
    }  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("job_start", args=["train"]), data)
    job = Job.objects.get(kind="train")
    assert response.status_code == 302 and response["Location"] == reverse("job_detail", args=[job.pk])
    job.refresh_from_db()
    assert job.status == "done" and job.typed_params.rank == 4
    assert (tmp_path / "a" / CARD).is_file()
    bad = admin_client.post(reverse("job_start", args=["train"]), {**data, "base_model": "/no/such/model"})
    assert bad.status_code == 400 and "no model folder at /no/such/model" in bad.content.decode()


def test_export_training_writes_both_formats_with_a_manifest(gold_round, tmp_path, adjudicator):
    out = tmp_path / "train.jsonl"
    call_command("export_training", "--round", gold_round.name, "--format", "chat", "--out", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 5 and lines[0]["messages"][-1]["role"] == "assistant"
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    assert manifest["format"] == "chat" and manifest["records"] == 5 and manifest["items"] == 4
    assert manifest["item_set"]["name"] == gold_round.item_set.name
    assert manifest["rule_set_version"] == "1" and manifest["renderer_version"]
    call_command("export_training", "--round", gold_round.name, "--passes", "gold,annotator:alice",
                 "--out", str(tmp_path / "p.jsonl"))  # fmt: skip
    prompt = json.loads(Path(f"{tmp_path / 'p.jsonl'}.manifest.json").read_text())
    assert prompt["sources"] == {"gold": 5, "annotator:alice": 4} and prompt["lines"] == 9 * 12
    with pytest.raises(CommandError, match="pass annotator:zed: no submitted annotations") as error:
        call_command("export_training", "--round", gold_round.name, "--passes", "annotator:zed", "--out",
                     str(tmp_path / "z.jsonl"))  # fmt: skip
    assert error.value.returncode == 2


def test_the_gold_page_offers_the_download(gold_round, client, adjudicator, annotator):
    client.force_login(adjudicator)
    page = client.get(reverse("gold_list", args=[gold_round.pk])).content.decode()
    assert reverse("gold_training", args=[gold_round.pk]) + "?format=chat" in page
    response = client.get(reverse("gold_training", args=[gold_round.pk]), {"format": "prompt"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(archive.namelist())
    assert names == ["training-prefilled-prompt.jsonl", "training-prefilled-prompt.jsonl.manifest.json"]
    manifest = json.loads(archive.read(names[1]))
    assert manifest["lines"] == len(archive.read(names[0]).splitlines()) == 60
    assert client.get(reverse("gold_training", args=[gold_round.pk]), {"format": "xml"}).status_code == 400
    client.force_login(annotator)
    assert client.get(reverse("gold_training", args=[gold_round.pk])).status_code == 403


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread, on its own connection
def test_train_parser_runs_the_same_job_here(gold_round, base, tmp_path):
    out = io.StringIO()
    call_command(
        "train_parser", "--round", gold_round.name, "--base", base, "--out", str(tmp_path / "a"),
        "--rank", "4", "--epochs", "1", "--batch-size", "30", "--lr", "0.01", stdout=out,
    )  # fmt: skip
    job = Job.objects.get(kind="train")
    assert (job.status, job.done, job.created_by) == ("done", 2, None)
    assert f"job #{job.pk} done: 2/2 steps, loss " in out.getvalue()
    assert (tmp_path / "a" / CARD).is_file() and job.typed_params.rank == 4
    with pytest.raises(CommandError, match="no model folder at /no/such/model") as error:
        call_command("train_parser", "--round", gold_round.name, "--base", "/no/such/model")
    assert error.value.returncode == 2
    with pytest.raises(CommandError, match="pass 'parser:lexical': training data comes from gold"):
        call_command("train_parser", "--round", gold_round.name, "--base", base, "--passes", "parser:lexical")
