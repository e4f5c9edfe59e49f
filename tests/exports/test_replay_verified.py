"""Replay of a verified whole-corpus export (a tiny NLI model built here): every line's judgement is
read back from the verifier's cache (the model is never loaded), two rounds share the items, and
a judgement missing from the cache is named by item, slot and field."""

import zipfile

import pytest

from adjudication.gold.services import gold_resolve, gold_sync
from adjudication.models import GoldItem
from annotator.models import Assignment
from annotator.services import annotation_submit
from exports.export import export_start
from exports.models import Export
from exports.replay import replay_stored
from jobs.services import job_run
from nsmcore import emoexpl
from nsmcore.tiny import build_tiny_nli
from tests.explications import PRED
from verification.models import LineVerification

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def nli_path(tmp_path_factory):
    return str(
        build_tiny_nli(tmp_path_factory.mktemp("nli"), labels=("neutral", "contradiction", "entailment"))
    )


@pytest.fixture(autouse=True)
def _settings(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    settings.NSM_VERIFIER_DEVICE = "cpu"


@pytest.fixture
def two_rounds(gold_round, blind_round, annotator, other_annotator, adjudicator):
    """gold_round's four items resolved (one with two construals); the blind round over the same
    items submitted too (its gold is gold_round's: one record per item)."""
    for user in (annotator, other_annotator):
        for a in Assignment.objects.filter(round=blind_round, annotator=user).order_by("item_id"):
            annotation_submit(assignment=a, user=user, values={**PRED, "body": "yes"}, base_version=0)
    gold_sync(blind_round)
    assert GoldItem.objects.filter(round=blind_round).count() == 0
    return gold_round


def test_a_verified_whole_corpus_export_replays_byte_for_byte(two_rounds, admin_user, nli_path):
    job = export_start(user=admin_user, round_=None, model=nli_path, enqueue=False)
    job_run(job.pk)
    export = Export.objects.get(job_id=job.pk)
    assert set(export.manifest["agreement"]) == {"prefilled", "blind"}
    assert [r["name"] for r in export.manifest["recipe"]["rounds"]] == ["blind", "prefilled"]
    with zipfile.ZipFile(export.path) as zf:  # the writer's fixed dates: nothing tells when it ran
        assert {info.date_time for info in zf.infolist()} == {emoexpl.ZIP_DATE}

    result = replay_stored(export)
    assert result.identical, [d.text for d in result.differences.kept]
    assert result.replayed == 4 and export.manifest["counts"]["entailed_lines"] is not None

    # a judgement the cache no longer holds: the replay names the line's item and slot
    gone = LineVerification.objects.order_by("pk").first()
    LineVerification.objects.filter(pk=gone.pk).delete()
    result = replay_stored(export)
    lines = [d for d in result.differences.kept if d.field == "lines"]
    assert lines and all(d.item.startswith("test:") and d.slot for d in lines)
    assert any(line["text"] == gone.line for d in lines for line in d.archive)


def test_a_second_hand_resolution_replaces_the_first(gold_round, admin_user, adjudicator):
    """Two resolutions of one record (the second keeps one construal): the replay follows both."""
    gold = GoldItem.objects.get(item__source_id="t3-0")
    gold_resolve(user=adjudicator, gold=gold, values={"intensity": "plain"}, why="one reading after all")
    job = export_start(user=admin_user, round_=gold_round, verify=False, enqueue=False)
    job_run(job.pk)
    result = replay_stored(Export.objects.get(job_id=job.pk))
    assert result.identical, [d.text for d in result.differences.kept]
