"""The train job's classifier method: a round's gold trains nsmcore's classifier parser (no base
model, no GPU), the folder's card carries the data hash and the data's manifest, and a prefill job
with backend classifier and that folder predicts and names it; the frozen pairs are read back on
a resume; held-out items are refused as for LoRA; the command and the form."""

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotator.models import Item, ItemSet, ParserPrediction
from annotator.sampling import item_set_from_items
from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import job_resume, job_run
from nsmcore.parsers.classifier import CARD_FILE, MODEL_FILE, data_hash, load_classifier
from nsmcore.schema import SLOT_NAMES
from predictions.prefill import job_prefill_start
from training.params import TrainParams
from training.train import job_train_start


@pytest.fixture
def admin_client(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.fixture
def held_out(gold_round):
    """One of the round's items is also in the held-out evaluation set."""
    item = Item.objects.get(source_id="t2-0")
    return item_set_from_items(name="eval-36", items=[item], tier=ItemSet.Tier.EVAL)


def form_data(gold_round, **extra):
    return {"target": f"round:{gold_round.pk}", "passes": "gold", "seed": 0, **extra}


def test_a_classifier_train_job_saves_a_model_a_prefill_job_uses(
    gold_round, admin_user, admin_client, tmp_path
):
    out = tmp_path / "clf"
    job = job_train_start(
        user=admin_user, round_=gold_round, method="classifier", output_dir=str(out), seed=3, enqueue=False
    )
    assert (job.kind, job.total, job.typed_params.base_model) == ("train", 1, "")
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.error) == ("done", 1, 1, "")

    # the frozen data: one (text, slots) pair per explication, in the round's text field (masked);
    # no prompt file (that is the LoRA method's)
    pairs = [json.loads(line) for line in (out / "data" / "train.pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == 5 and not (out / "data" / "train.prompt.jsonl").exists()
    assert pairs[0]["text"] == Item.objects.get(source_id=pairs[0]["id"]).masked_text
    assert set(pairs[0]["slots"]) == set(SLOT_NAMES)

    card = json.loads((out / CARD_FILE).read_text())
    assert (out / MODEL_FILE).is_file()
    assert card["data_hash"] == data_hash([(p["text"], p["slots"]) for p in pairs])
    assert card["seed"] == 3 and card["sizes"]["examples"] == 5
    meta = card["meta"]
    assert meta["job"] == job.pk and meta["method"] == "classifier"
    assert meta["data"]["job"] == job.pk and meta["data"]["records"] == 5 and meta["data"]["items"] == 4
    assert meta["data"]["rule_set_version"] == "1" and meta["data"]["renderer_version"]
    assert [s["name"] for s in meta["data"]["item_sets"]] == [gold_round.item_set.name]
    assert len(meta["data"]["data_sha256"]) == 64

    summary = job.summary
    assert summary["method"] == "classifier" and summary["model"] == str(out)
    assert summary["data_hash"] == card["data_hash"] and summary["seconds"] >= 0
    assert {slot: sum(c.values()) for slot, c in summary["value_counts"].items()} == dict.fromkeys(
        SLOT_NAMES, 5
    )
    spec = summary["registered"]
    assert spec == "classifier-prefilled@1" and job.engine == f"classifier:{spec}"
    assert job.engine_version.startswith(f"data-{card['data_hash'][:12]}-opts-")

    page = admin_client.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "Use it for prefill" in page and f"--backend classifier --model {spec}" in page
    assert 'id="train-value-counts"' in page and 'id="loss-curve"' not in page
    assert "1 / 1</strong> steps" in page

    prefill = job_prefill_start(
        user=admin_user, round_=gold_round, backend="classifier", model=str(out), enqueue=False
    )
    job_run(prefill.pk)
    prefill.refresh_from_db()
    assert prefill.status == "done", prefill.error
    assert (prefill.engine, prefill.engine_version) == (job.engine, job.engine_version)
    names = set(ParserPrediction.objects.filter(job=prefill).values_list("parser", "parser_version"))
    assert names == {(f"classifier:{spec}", job.engine_version)}  # the folder given is the registered parser
    assert ParserPrediction.objects.filter(job=prefill, legal=True).count() == 4


def test_a_resumed_classifier_job_trains_on_the_pairs_it_froze(
    gold_round, admin_user, tmp_path, django_capture_on_commit_callbacks
):
    out = tmp_path / "clf"
    job = job_train_start(
        user=admin_user, round_=gold_round, method="classifier", output_dir=str(out), enqueue=False
    )
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done) == ("cancelled", 0)
    frozen = out / "data" / "train.pairs.jsonl"
    assert frozen.is_file() and not (out / CARD_FILE).exists()
    # a changed frozen file is refused on the resume, named, and no model is written
    original = frozen.read_text()
    frozen.write_text(original.replace(json.loads(original.splitlines()[0])["text"], "something else", 1))
    with django_capture_on_commit_callbacks(execute=True):
        job_resume(job=job)
    job.refresh_from_db()
    assert job.status == "failed" and "does not match the data hash in its manifest" in job.error
    assert not (out / CARD_FILE).exists()
    frozen.write_text(original)
    with django_capture_on_commit_callbacks(execute=True):
        job_resume(job=job)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("done", 1, 1)
    card = json.loads((out / CARD_FILE).read_text())
    assert card["meta"]["job"] == job.pk and card["sizes"]["examples"] == 5


def test_held_out_items_are_refused_for_the_classifier(held_out, gold_round, admin_user, admin_client):
    with pytest.raises(JobError, match="held-out \\(eval tier\\) item cannot be training data: t2-0"):
        job_train_start(user=admin_user, round_=gold_round, method="classifier", enqueue=False)
    response = admin_client.post(
        reverse("job_start", args=["train"]), form_data(gold_round, method="classifier")
    )
    assert response.status_code == 400 and "t2-0" in response.content.decode()
    assert not Job.objects.filter(kind="train").exists()
    with pytest.raises(CommandError, match="t2-0") as error:
        call_command("train_parser", "--round", gold_round.name, "--method", "classifier")
    assert error.value.returncode == 2
    assert not Job.objects.filter(kind="train").exists()


def test_base_model_is_required_for_lora_only():
    assert TrainParams.from_json({"method": "classifier"}).base_model == ""
    with pytest.raises(JobError, match="parameter 'base_model': empty; the lora method needs"):
        TrainParams.from_json({"method": "lora"})
    with pytest.raises(JobError, match="parameter 'method': unknown method 'svm'"):
        TrainParams.from_json({"method": "svm", "base_model": "x"})


def test_the_form_trains_a_classifier_without_a_base_model_and_refuses_lora_without(
    gold_round, admin_client, django_capture_on_commit_callbacks, tmp_path
):
    lora = admin_client.post(
        reverse("job_start", args=["train"]), form_data(gold_round, method="lora", base_model=" ")
    )
    assert lora.status_code == 400
    assert "required for the lora method" in lora.content.decode()
    # the field at fault takes the focus, in the one form shown open
    assert re.search(r'<input type="text" name="base_model"[^>]*autofocus', lora.content.decode())
    assert not Job.objects.filter(kind="train").exists()

    # no base model, no LoRA settings: the classifier does not read them
    data = form_data(gold_round, method="classifier", output_dir=str(tmp_path / "c"))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("job_start", args=["train"]), data)
    job = Job.objects.get(kind="train")
    assert response.status_code == 302 and response["Location"] == reverse("job_detail", args=[job.pk])
    job.refresh_from_db()
    assert job.status == "done", job.error
    params = job.typed_params
    assert (params.method, params.base_model, params.rank) == ("classifier", "", 16)
    assert (tmp_path / "c" / CARD_FILE).is_file()


@pytest.mark.django_db(transaction=True)  # the command runs the job in a thread, on its own connection
def test_train_parser_with_method_classifier(gold_round, tmp_path):
    out = io.StringIO()
    folder = tmp_path / "c"
    call_command("train_parser", "--round", gold_round.name, "--method", "classifier", "--out", str(folder),
                 "--seed", "2", stdout=out)  # fmt: skip
    job = Job.objects.get(kind="train")
    assert (job.status, job.done, job.total, job.created_by) == ("done", 1, 1, None)
    assert (
        f"job #{job.pk} done: 1/1 steps; registered as classifier-prefilled@1, model in {folder}"
        in out.getvalue()
    )
    card = json.loads((folder / CARD_FILE).read_text())
    assert card["seed"] == 2 and card["meta"]["job"] == job.pk
    assert job.typed_params.base_model == "" and job.typed_params.method == "classifier"
    assert Path(folder / MODEL_FILE).is_file()


@pytest.fixture
def label_pool(gold_round):
    """Labelled texts (no explications) beside the round: twelve new ones, one of them held out,
    and the round's own items (their gold already supervises the model)."""
    from annotator.imports import items_import

    lines = [
        json.dumps({"text_id": f"lab-{k}", "emotion": label, "text": text})
        for k, (label, text) in enumerate(
            [
                ("disgust", f"I found a {c} in my {p}")
                for c in ("rat", "slug", "leech")
                for p in ("bed", "sink")
            ]
            + [("sadness", f"my old {p} died") for p in ("cat", "dog", "horse", "fish", "bird", "frog")]
        )
    ]
    items_import(data="\n".join(lines), fmt="jsonl", source="labels")
    new = list(Item.objects.filter(source="labels").order_by("source_id"))
    pool = item_set_from_items(
        name="label-pool", items=new + list(Item.objects.filter(item_sets=gold_round.item_set))
    )
    item_set_from_items(name="label-eval", items=[new[0]], tier=ItemSet.Tier.EVAL)
    return pool, new


def test_a_classifier_trains_through_the_rules_on_an_item_sets_labels(
    gold_round, admin_user, label_pool, tmp_path
):
    pool, new = label_pool
    out = tmp_path / "clf"
    job = job_train_start(
        user=admin_user, round_=gold_round, method="classifier", output_dir=str(out),
        labels_from=pool.name, enqueue=False,
    )  # fmt: skip
    job_run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.error) == ("done", 3, 3, "")  # gold fit + 2 EM rounds
    card = json.loads((out / CARD_FILE).read_text())
    labels = card["meta"]["labels"]
    assert labels == {
        "item_set": "label-pool", "texts": 11,
        "left_out": {"held_out": 1, "supervised_by_gold": 4, "no_known_label": 0},
    }  # fmt: skip
    assert card["sources"]["labelled"]["ids"] == sorted(i.source_id for i in new[1:])
    assert job.summary["labelled"]["texts"] == 11
    from registry.selectors import trained_ids

    trained = trained_ids(job.engine)
    assert {("labels", i.source_id) for i in new[1:]} <= trained and (
        "labels",
        new[0].source_id,
    ) not in trained


def test_labels_from_is_checked_before_a_job_exists(gold_round, admin_user, admin_client):
    with pytest.raises(JobError, match="'labels_from': no item set named 'nowhere'"):
        job_train_start(user=admin_user, round_=gold_round, method="classifier", labels_from="nowhere")
    with pytest.raises(JobError, match="labels_from"):
        job_train_start(
            user=admin_user, round_=gold_round, method="lora", base_model="x", labels_from="label-pool"
        )
    before = Job.objects.count()
    response = admin_client.post(
        reverse("job_start", args=["train"]),
        form_data(gold_round, method="classifier", labels_from="nowhere"),
    )
    assert response.status_code == 400 and "no item set named" in response.content.decode()
    assert Job.objects.count() == before


def test_nsmcore_trains_on_the_tools_own_training_export(gold_round, tmp_path):
    from nsmcore.cli import main
    from nsmcore.parsers import trained_item_ids

    export = tmp_path / "pairs.jsonl"
    call_command("export_training", "--round", gold_round.name, "--format", "pairs", "--out", str(export))
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert len(lines) == 5 and set(lines[0]) == {"id", "source", "construal", "text", "slots"}
    out, err = io.StringIO(), io.StringIO()
    code = main(["train-classifier", "--input", str(export), "--out", str(tmp_path / "m")], out, err)
    assert code == 0, err.getvalue()
    assert "trained on 5 examples" in out.getvalue()
    assert trained_item_ids(f"classifier:{tmp_path / 'm'}") == {line["id"] for line in lines}


def test_the_encoder_setting_is_the_default_and_a_bad_one_is_named(
    gold_round, admin_user, settings, tmp_path
):
    settings.NSM_ENCODER_MODEL = str(tmp_path / "no-encoder")
    with pytest.raises(
        JobError, match=r"'encoder': encoder .*no-encoder': no model folder there.*NSM_ENCODER_MODEL"
    ):
        job_train_start(user=admin_user, round_=gold_round, method="classifier", enqueue=False)
    settings.NSM_ENCODER_MODEL = ""
    job = job_train_start(user=admin_user, round_=gold_round, method="classifier", enqueue=False)
    assert job.typed_params.encoder == ""


def test_a_label_head_and_label_trust_reach_the_model_from_page_api_and_command(
    gold_round, admin_user, admin_client, label_pool, tmp_path
):
    pool, _ = label_pool
    response = admin_client.post(
        reverse("job_start", args=["train"]),
        form_data(gold_round, method="classifier", labels_from=pool.name, label_prior="3", label_trust="0.5",
                  output_dir=str(tmp_path / "page")),
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    job = Job.objects.latest("pk")
    assert (job.typed_params.label_prior, job.typed_params.label_trust) == (3.0, 0.5)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    card = json.loads((tmp_path / "page" / CARD_FILE).read_text())
    assert (card["options"]["label_prior"], card["options"]["label_trust"]) == (3.0, 0.5)
    assert load_classifier(tmp_path / "page").label_head is not None
    # a label head needs labels; trust must be a probability: refused before a job exists
    before = Job.objects.count()
    response = admin_client.post(
        reverse("job_start", args=["train"]), form_data(gold_round, method="classifier", label_prior="2")
    )
    assert response.status_code == 400 and "needs labels_from" in response.content.decode()
    response = admin_client.post(
        "/api/jobs/train/",
        {"round": gold_round.pk, "method": "classifier", "labels_from": pool.name, "label_trust": 1.5},
        content_type="application/json",
    )
    assert response.status_code == 400 and "label_trust" in response.json()
    with pytest.raises(CommandError, match="needs labels_from"):
        call_command(
            "train_parser", "--round", gold_round.name, "--method", "classifier", "--label-prior", "2"
        )
    assert Job.objects.count() == before


def test_with_labels_the_job_uses_the_measured_defaults_and_records_its_held_back_accuracy(
    gold_round, admin_user, label_pool, tmp_path
):
    from annotator.imports import items_import
    from registry.models import RegisteredParser

    pool, _ = label_pool
    job = job_train_start(
        user=admin_user, round_=gold_round, method="classifier", output_dir=str(tmp_path / "few"),
        labels_from=pool.name, enqueue=False,
    )  # fmt: skip
    job_run(job.pk)
    job.refresh_from_db()
    card = json.loads((tmp_path / "few" / CARD_FILE).read_text())
    assert (card["options"]["label_trust"], card["options"]["label_prior"]) == (0.5, 4.0)
    assert job.summary["abstention"] == "no abstention: 11 labelled texts, and 'auto' needs 40"
    assert RegisteredParser.objects.get(job_id=job.pk).validation_accuracy is None
    # 48 labelled texts: a tenth is held back, the floor chosen on it, the accuracy registered
    lines = [
        json.dumps({"text_id": f"many-{k}", "emotion": label, "text": text})
        for k, (label, text) in enumerate(
            [("disgust", f"I found a {c} in my {p}") for c in ("rat", "slug", "leech", "worm")
             for p in ("bed", "sink", "bag", "shoe", "cup", "car")]
            + [("sadness", f"my old {p} died {w}") for p in ("cat", "dog", "horse", "fish", "bird", "frog")
               for w in ("today", "last week", "in spring", "at night")]
        )
    ]  # fmt: skip
    items_import(data="\n".join(lines), fmt="jsonl", source="many")
    many = item_set_from_items(name="many-labels", items=list(Item.objects.filter(source="many")))
    job = job_train_start(
        user=admin_user, round_=gold_round, method="classifier", output_dir=str(tmp_path / "many"),
        labels_from=many.name, enqueue=False,
    )  # fmt: skip
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    held = job.summary["validation"]
    registered = RegisteredParser.objects.get(job_id=job.pk)
    assert held["texts"] == 20  # a tenth, but at least 20 (nsmcore's MIN_CALIBRATION)
    assert registered.validation_texts == held["texts"]
    assert registered.validation_accuracy == round(held["routed_right_forced"] / held["texts"], 4)
    assert job.summary["abstention"].startswith(("below a confidence of", "none"))
