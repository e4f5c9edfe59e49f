"""The parser registry: a train job registers its parser as the next version of a name; a prefill
job takes it by name (never a path) and names its predictions by it; an unknown name is refused
before a job exists; an evaluation refuses the items it was trained on; the page, the API and the
command list it, for adjudicators and admins only."""

import io
import json
import os

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from adjudication.evaluation.figures import EvaluationRequestError
from adjudication.evaluation.parser import parser_vs_gold
from annotator.models import Item, ItemSet, ParserPrediction
from annotator.sampling import item_set_from_items
from jobs.kinds import JobError
from jobs.services import job_run
from predictions.prefill import job_prefill_start
from registry.models import RegisteredParser
from registry.selectors import UnknownParser, parser_get
from registry.services import RegistryError, parser_register
from training.train import job_train_start


def train(user, round_, tmp_path, **extra):
    extra.setdefault("output_dir", str(tmp_path / f"m{RegisteredParser.objects.count()}"))
    job = job_train_start(user=user, round_=round_, method="classifier", enqueue=False, **extra)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    return job


@pytest.fixture
def registered(gold_round, admin_user, tmp_path):
    return train(admin_user, gold_round, tmp_path)


def test_a_train_job_registers_the_next_version_of_its_name(gold_round, admin_user, tmp_path, registered):
    first = RegisteredParser.objects.get(job_id=registered.pk)
    assert (first.name, first.version, first.backend) == (
        f"classifier-{gold_round.name}".lower()[:63],
        1,
        "classifier",
    )
    assert registered.summary["registered"] == first.spec
    assert registered.engine == f"classifier:{first.spec}"
    assert first.trained_on == sorted(
        [source, sid]
        for source, sid in Item.objects.filter(item_sets=gold_round.item_set).values_list(
            "source", "source_id"
        )
    )
    assert first.card["data_hash"] and first.created_by == admin_user
    second = train(admin_user, gold_round, tmp_path)
    assert RegisteredParser.objects.get(job_id=second.pk).version == 2
    named = train(admin_user, gold_round, tmp_path, parser_name="clf-pilot")
    assert RegisteredParser.objects.get(job_id=named.pk).spec == "clf-pilot@1"
    assert parser_get(first.name).version == 2 and parser_get(f"{first.name}@1") == first


def test_a_bad_name_is_refused_before_a_job_exists(gold_round, admin_user):
    with pytest.raises(JobError, match="parser name 'Bad Name'"):
        job_train_start(user=admin_user, round_=gold_round, method="classifier", parser_name="Bad Name")
    with pytest.raises(RegistryError, match="parser name"):
        parser_register(name="a/b", backend="classifier", folder="/x", card={}, trained_on=[])


def test_prefill_takes_a_registered_parser_by_name(registered, admin_user, items):
    spec = RegisteredParser.objects.get(job_id=registered.pk).spec
    other = item_set_from_items(name="to-prefill", items=items[:2])
    job = job_prefill_start(
        user=admin_user, item_set=other, backend="classifier", model=spec.split("@")[0], enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.engine == f"classifier:{spec}"
    names = set(ParserPrediction.objects.filter(job_id=job.pk).values_list("parser", flat=True))
    assert names == {f"classifier:{spec}"} and ParserPrediction.objects.filter(job_id=job.pk).count() == 2
    raw = json.loads(ParserPrediction.objects.filter(parser=f"classifier:{spec}").first().raw_output)
    assert raw["decoding"] == "joint" and "label_mass" in raw and "posteriors" in raw


def test_an_unknown_parser_is_refused_before_a_job_exists(registered, admin_user, items):
    other = item_set_from_items(name="to-prefill", items=items[:2])
    spec = RegisteredParser.objects.get(job_id=registered.pk).spec
    name = spec.split("@")[0]
    for bad in ("nope", f"{name}@7", f"{name}@", f"{name}@99999999999999999999"):
        with pytest.raises(JobError, match=f"no registered parser '{bad}'; registered: {spec}"):
            job_prefill_start(user=admin_user, item_set=other, backend="classifier", model=bad, enqueue=False)
    with pytest.raises(JobError, match="/srv/none: model folders live inside NSM_MODEL_DIR"):
        job_prefill_start(
            user=admin_user, item_set=other, backend="classifier", model="/srv/none", enqueue=False
        )
    with pytest.raises(JobError, match="no classifier model folder at"):  # inside, but nothing there
        job_prefill_start(
            user=admin_user, item_set=other, backend="classifier", model="none/here", enqueue=False
        )
    with pytest.raises(UnknownParser, match=f"registered: {spec}"):
        parser_get("nope")


def test_an_evaluation_refuses_a_registered_parsers_training_items(registered, gold_round):
    spec = RegisteredParser.objects.get(job_id=registered.pk).spec
    trained_item = Item.objects.filter(item_sets=gold_round.item_set).order_by("source_id").first()
    ParserPrediction.objects.create(
        item=trained_item, parser=f"classifier:{spec}", parser_version="v", explication=None, legal=False
    )
    held = item_set_from_items(name="drawn-later", items=[trained_item], tier=ItemSet.Tier.EVAL)
    with pytest.raises(
        EvaluationRequestError,
        match=f"trained on 1 of the 1 held-out items of drawn-later: {trained_item.source_id}",
    ):
        parser_vs_gold(gold_round, f"parser:classifier:{spec}", heldout=held)


def test_the_page_api_and_command_list_it_for_adjudicators_and_admins(
    registered, client, adjudicator, annotator
):
    parser = RegisteredParser.objects.get(job_id=registered.pk)
    client.force_login(annotator)
    assert client.get(reverse("parsers")).status_code == 403
    assert client.get(reverse("api_parsers")).status_code == 403
    client.force_login(adjudicator)
    page = client.get(reverse("parsers")).content.decode()
    assert parser.spec in page and f"job #{registered.pk}" in page
    detail = client.get(reverse("parser_detail", args=[parser.name, parser.version])).content.decode()
    assert "data_hash" in detail and parser.parser_name in detail
    assert client.get(reverse("parser_detail", args=[parser.name, 9])).status_code == 404
    listed = client.get(reverse("api_parsers")).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [r["spec"] for r in rows] == [parser.spec] and rows[0]["trained_on"] == len(parser.trained_on)
    one = client.get(reverse("api_parser", args=[parser.pk])).json()
    assert one["card"]["data_hash"] == parser.card["data_hash"]
    by_name = client.get(reverse("api_parsers"), {"name": parser.spec, "backend": parser.backend}).json()
    assert [r["spec"] for r in by_name["results"]] == [parser.spec]
    assert client.get(reverse("api_parsers"), {"name": f"{parser.name}@x"}).json()["results"] == []
    refused = client.get(reverse("api_parsers"), {"backend": "AAA"})  # the schema's enum, kept
    assert refused.status_code == 400 and "backend" in refused.json()
    out = io.StringIO()
    call_command("parsers", stdout=out)
    assert parser.spec in out.getvalue()
    out = io.StringIO()
    call_command("parsers", parser.name, stdout=out)
    assert f"trained on {len(parser.trained_on)} items" in out.getvalue()
    with pytest.raises(CommandError, match="no registered parser 'nope'"):
        call_command("parsers", "nope")


def test_the_overlap_is_by_source_and_id_not_by_id_alone(registered, gold_round):
    from annotator.imports import items_import

    spec = RegisteredParser.objects.get(job_id=registered.pk).spec
    trained = Item.objects.filter(item_sets=gold_round.item_set).order_by("source_id").first()
    trained_id = trained.source_id
    ParserPrediction.objects.create(  # the pass exists in the round
        item=trained, parser=f"classifier:{spec}", parser_version="v", explication=None, legal=False
    )
    items_import(
        data=json.dumps({"text_id": trained_id, "emotion": "joy", "text": "another corpus"}),
        fmt="jsonl",
        source="othercorpus",
    )
    namesake = Item.objects.get(source="othercorpus", source_id=trained_id)
    held = item_set_from_items(name="other-eval", items=[namesake], tier=ItemSet.Tier.EVAL)
    ParserPrediction.objects.create(
        item=namesake, parser=f"classifier:{spec}", parser_version="v", explication=None, legal=False
    )
    # scored (it has no gold in the round), not refused: the parser never saw this corpus's item
    assert parser_vs_gold(gold_round, f"parser:classifier:{spec}", heldout=held).scored == 0


def test_a_registered_folder_given_by_a_relative_path_is_that_parser(
    registered, admin_user, items, tmp_path, monkeypatch
):
    parser = RegisteredParser.objects.get(job_id=registered.pk)
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(parser.folder, tmp_path)
    other = item_set_from_items(name="to-prefill", items=items[:1])
    job = job_prefill_start(
        user=admin_user, item_set=other, backend="classifier", model=relative, enqueue=False
    )
    job_run(job.pk)
    job.refresh_from_db()
    assert job.engine == f"classifier:{parser.spec}"


def test_train_jobs_with_other_settings_do_not_block_each_other(gold_round, admin_user):
    first = job_train_start(user=admin_user, round_=gold_round, method="classifier", enqueue=False)
    second = job_train_start(
        user=admin_user, round_=gold_round, method="classifier", parser_name="other", enqueue=False
    )
    assert first.pk != second.pk
    with pytest.raises(JobError, match="already"):
        job_train_start(
            user=admin_user, round_=gold_round, method="classifier", parser_name="other", enqueue=False
        )


def test_a_bad_encoder_or_a_taken_output_folder_is_refused_before_a_job_exists(
    registered, gold_round, admin_user
):
    with pytest.raises(JobError, match="'encoder': encoder '/nonexistent': no model folder there"):
        job_train_start(user=admin_user, round_=gold_round, method="classifier", encoder="/nonexistent")
    taken = RegisteredParser.objects.get(job_id=registered.pk).folder
    with pytest.raises(JobError, match=f"holds the training data of job #{registered.pk}"):
        job_train_start(user=admin_user, round_=gold_round, method="classifier", output_dir=taken, seed=5)


def test_a_model_retrained_on_other_labelled_texts_is_a_new_version(tmp_path):
    from nsmcore.parsers.classifier import ClassifierParser
    from nsmcore.parsers.classifier_training import train_classifier
    from nsmcore.parsers.supervision import LabelledText
    from tests.nsmcore.test_classifier import TRAIN

    versions = set()
    for k, label in enumerate(["joy", "sadness"]):
        labelled = [LabelledText("a day at the beach", label)]
        train_classifier(TRAIN, labelled=labelled, iterations=1).save(tmp_path / str(k))
        versions.add(ClassifierParser(str(tmp_path / str(k))).version)
    train_classifier(TRAIN).save(tmp_path / "gold")
    versions.add(ClassifierParser(str(tmp_path / "gold")).version)
    assert len(versions) == 3


def _fake(name, accuracy=None, texts=None, folder="/srv/m"):
    """A registration as a train job makes it; the card's calibration share gives the figure."""
    card = (
        {"sources": {"calibration": {"texts": texts, "routed_right_forced": round(accuracy * texts)}}}
        if texts
        else {}
    )
    return parser_register(name=name, backend="classifier", folder=folder, card=card, trained_on=[["s", "1"]])


def test_the_best_parser_has_the_highest_held_back_accuracy_then_the_newest(db):
    from registry.selectors import best_parser

    assert best_parser() is None
    plain = _fake("plain")
    assert best_parser() == plain  # nothing held back anywhere: the newest
    good = _fake("good", 0.4, 50)
    _fake("worse", 0.3, 50)
    _fake("newest-plain")
    assert (good.validation_accuracy, good.validation_texts, good.trained_count) == (0.4, 50, 1)
    assert best_parser() == good


def test_a_prefill_with_no_parser_chosen_uses_the_best_registered_one(
    registered, gold_round, admin_user, tmp_path, items, client
):
    first = RegisteredParser.objects.get(job_id=registered.pk)
    other = item_set_from_items(name="to-prefill", items=items[:2])
    job = job_prefill_start(user=admin_user, item_set=other, enqueue=False)
    assert (job.typed_params.backend, job.typed_params.model) == ("classifier", first.spec)
    # a parser that held texts back and routed them well comes first, whatever its age
    second = train(admin_user, gold_round, tmp_path)
    RegisteredParser.objects.filter(job_id=second.pk).update(validation_accuracy=0.5, validation_texts=40)
    third = train(admin_user, gold_round, tmp_path)
    best = RegisteredParser.objects.get(job_id=second.pk)
    client.force_login(admin_user)
    page = client.get(reverse("jobs")).content.decode()
    assert f'<option value="{best.spec}" selected data-backend="classifier">' in page
    assert '<option value="classifier" selected>' in page
    listed = client.get(reverse("api_parsers")).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [r["spec"] for r in rows if r["best"]] == [best.spec]
    assert {r["spec"]: r["validation_accuracy"] for r in rows}[best.spec] == 0.5
    parsers_page = client.get(reverse("parsers")).content.decode()
    link = reverse("parser_detail", args=[best.name, best.version])
    assert f'uses <a href="{link}"><code>{best.spec}' in parsers_page
    out = io.StringIO()
    call_command("parsers", stdout=out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith(best.spec))
    assert "held-back accuracy 0.500 of 40" in line and line.endswith("<- prefill default")
    assert RegisteredParser.objects.get(job_id=third.pk).spec not in [r["spec"] for r in rows if r["best"]]


def test_a_prefill_decodes_into_the_active_rule_set(
    registered, admin_user, adjudicator, items, django_capture_on_commit_callbacks
):
    from adjudication.rule_revisions.services import revision_activate, revision_propose
    from nsmcore.decoding import rules_tag
    from nsmcore.mapper import route
    from rules.rulesets import active_rule_set
    from tests.rules.data import moved

    spec = RegisteredParser.objects.get(job_id=registered.pk).spec
    other = item_set_from_items(name="to-prefill", items=items[:3])
    first = job_prefill_start(
        user=admin_user, item_set=other, backend="classifier", model=spec, enqueue=False
    )
    job_run(first.pk)
    first.refresh_from_db()
    assert first.engine_version.endswith(f"-rules-{rules_tag(active_rule_set())}")
    with django_capture_on_commit_callbacks(execute=True):
        revision_activate(
            user=admin_user, version=revision_propose(user=adjudicator, document=moved("no-emotion", 0))
        )
    rules = active_rule_set()
    assert rules.version == "2"
    again = job_prefill_start(
        user=admin_user, item_set=other, backend="classifier", model=spec, enqueue=False
    )
    job_run(again.pk)
    again.refresh_from_db()
    # another rule set, another version: the items are decoded again, into the active rules
    assert again.engine_version.endswith(f"-rules-{rules_tag(rules)}") and again.skipped == 0
    for p in ParserPrediction.objects.filter(job=again):
        assert json.loads(p.raw_output)["label"] == route(p.explication, rules).label


def test_a_registered_name_on_the_wrong_backend_or_an_unknown_version_is_refused_before_a_job(
    registered, admin_user, items, client
):
    spec = RegisteredParser.objects.get(job_id=registered.pk).spec
    name = spec.split("@")[0]
    other = item_set_from_items(name="to-prefill", items=items[:2])
    before = ParserPrediction.objects.count(), RegisteredParser.objects.count()
    from jobs.models import Job

    jobs = Job.objects.count()
    with pytest.raises(JobError, match=f"{spec} is a classifier parser: choose the backend classifier"):
        job_prefill_start(user=admin_user, item_set=other, backend="transformers", model=spec, enqueue=False)
    with pytest.raises(JobError, match=f"{spec} is a classifier parser"):
        job_prefill_start(user=admin_user, item_set=other, backend="lexical", model=name, enqueue=False)
    with pytest.raises(JobError, match=f"no registered parser '{name}@99'"):
        job_prefill_start(
            user=admin_user, item_set=other, backend="transformers", model=f"{name}@99", enqueue=False
        )
    client.force_login(admin_user)
    response = client.post(
        "/api/jobs/prefill/", {"item_set": other.pk, "backend": "transformers", "model": f"{name}@99"},
        content_type="application/json",
    )  # fmt: skip
    assert response.status_code == 400 and "no registered parser" in json.dumps(response.json())
    assert (
        Job.objects.count() == jobs
        and (ParserPrediction.objects.count(), RegisteredParser.objects.count()) == before
    )
    # one name, one backend
    with pytest.raises(RegistryError, match=f"parser name '{name}' is taken by classifier parsers"):
        parser_register(name=name, backend="transformers", folder="/srv/a", card={}, trained_on=[])


def test_the_default_classifier_is_resolved_when_the_job_is_made(
    registered, gold_round, admin_user, tmp_path, items
):
    first = RegisteredParser.objects.get(job_id=registered.pk)
    other = item_set_from_items(name="to-prefill", items=items[:2])
    job = job_prefill_start(user=admin_user, item_set=other, backend="classifier", enqueue=False)
    assert job.typed_params.model == first.spec
    newer = train(admin_user, gold_round, tmp_path)  # registered after the job was made
    RegisteredParser.objects.filter(job_id=newer.pk).update(validation_accuracy=0.9, validation_texts=40)
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.engine == f"classifier:{first.spec}"  # the parser checked


def test_jobs_write_and_load_models_only_inside_the_model_folder(gold_round, admin_user, items, tmp_path):
    """Issue 24: an admin could make the worker write anywhere (a train job's output_dir) and
    unpickle a model from any folder (a prefill's classifier model, a card's model_file)."""
    from jobs.models import Job

    before = Job.objects.count()
    for outside in ("/etc/nsm", "../escape", str(tmp_path.parent / "elsewhere")):
        with pytest.raises(JobError, match=r"output_dir': .*model folders live inside NSM_MODEL_DIR"):
            job_train_start(user=admin_user, round_=gold_round, method="classifier", output_dir=outside)
    # nor the registry's own folder, whose card.json would then describe the whole registry
    # (found by a security probe: "." wrote model.joblib and card.json at its top)
    for root in (".", str(tmp_path), "mine/.."):
        with pytest.raises(JobError, match=r"output_dir': .*a folder inside NSM_MODEL_DIR, not that folder"):
            job_train_start(user=admin_user, round_=gold_round, method="classifier", output_dir=root)
    other = item_set_from_items(name="to-prefill", items=items[:1])
    with pytest.raises(JobError, match="model folders live inside NSM_MODEL_DIR"):
        job_prefill_start(user=admin_user, item_set=other, backend="classifier", model="../x", enqueue=False)
    assert Job.objects.count() == before
    # a relative folder name is inside it: trained there, and loaded from there by that name
    job = train(admin_user, gold_round, tmp_path, output_dir="mine")
    assert (tmp_path / "mine" / "card.json").is_file() and job.summary["model"] == str(tmp_path / "mine")
    # a card may not point the loader at a file outside its folder
    from nsmcore.parsers.classifier import ClassifierError, load_classifier

    card = json.loads((tmp_path / "mine" / "card.json").read_text())
    (tmp_path / "mine" / "card.json").write_text(json.dumps({**card, "model_file": "../../evil.joblib"}))
    with pytest.raises(ClassifierError, match="model_file must be a file name in the folder"):
        load_classifier(tmp_path / "mine")
