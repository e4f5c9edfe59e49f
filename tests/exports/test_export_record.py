"""The export's lines are the records ``nsmcore.emoexpl.record`` builds, whole: the export
assembles them from encoded fragments for speed, and this compares every line with the builder's
record made from the database independently (and validates both against the JSON Schema)."""

import json
import zipfile
from pathlib import Path

import jsonschema
import pytest

from adjudication.models import GoldItem
from annotator.models import ItemSet, ItemSetMember, text_in_field
from exports.export import export_start
from exports.models import Export
from jobs.services import job_run
from nsmcore import emoexpl
from nsmcore.render import render
from nsmcore.schema import Explication
from nsmcore.tiny import build_tiny_nli
from nsmcore.verifier import text_key
from verification.models import LineVerification

pytest.importorskip("torch", reason="torch is in requirements.txt; this guards a partial install")

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "emoexpl" / "record.schema.json").read_text()
)


@pytest.fixture(autouse=True)
def _export_dir(settings, tmp_path):
    settings.NSM_EXPORT_DIR = tmp_path / "exports"
    settings.NSM_VERIFIER_DEVICE = "cpu"


def exported_lines(user, **kw) -> tuple[list[str], dict]:
    job = export_start(user=user, enqueue=False, **kw)
    job_run(job.pk)
    with zipfile.ZipFile(Export.objects.get(job=job).path) as zf:
        return zf.read("emoexpl.jsonl").decode().splitlines(), json.loads(zf.read("manifest.json"))


def built_record(gold: GoldItem, verifier: emoexpl.VerifierMeta | None) -> dict:
    """The record of one gold item, from its rows and the per-line judgements, by the builder."""
    item, round_ = gold.item, gold.round
    premise = text_in_field(item.text, item.masked_text, round_.text_field)
    judged = {
        line: (p_e, p_n, p_c)
        for line, p_e, p_n, p_c in LineVerification.objects.filter(text_sha=text_key(premise)).values_list(
            "line", "p_entailment", "p_neutral", "p_contradiction"
        )
    }
    tiers = [(m.item_set.tier, m.item_set.name) for m in ItemSetMember.objects.filter(item=item)]
    construals = [
        emoexpl.ConstrualData(
            index=c.index, explication=c.slots, residue=c.residue, notes=c.notes, provenance=c.provenance,
            label=c.label, rule=c.rule, fired=c.fired, abstention=c.abstention,
            rule_set_version=c.rule_set_version,
            lines=[(line, judged.get(line.text)) for line in render(Explication.from_dict(c.slots))],
        )
        for c in gold.construals.order_by("index")
    ]  # fmt: skip
    return emoexpl.record(
        source=item.source, source_id=item.source_id, text=item.text, masked_text=item.masked_text,
        premise_field=round_.text_field, reference_label=item.reference_label, tiers=tiers,
        round_name=round_.name, pivotal_slots=gold.pivotal_slots, construals=construals, verifier=verifier,
    )  # fmt: skip


def expected_lines(verifier: emoexpl.VerifierMeta | None) -> list[str]:
    golds = GoldItem.objects.filter(status=GoldItem.Status.RESOLVED).select_related("item", "round")
    records = [built_record(g, verifier) for g in golds.order_by("item_id")]
    for record in records:
        jsonschema.validate(record, SCHEMA)
    return [emoexpl.dumps(r) for r in records]


def test_verified_lines_are_the_builders_records(gold_round, admin_user, tmp_path):
    # a model path with percent signs (the fast path formats with %), an item in several sets
    path = str(build_tiny_nli(tmp_path / "nli %s 100%", labels=("entailment", "neutral", "contradiction")))
    for name, tier in (("zz-eval", "eval"), ("aa-pilot", "P")):
        ItemSetMember.objects.create(
            item_set=ItemSet.objects.create(name=name, tier=tier), item=gold_round.item_set.items.first(),
            position=1,
        )  # fmt: skip
    for _ in range(2):  # building the kept verified lines, then reading them back
        lines, manifest = exported_lines(admin_user, round_=gold_round, model=path)
        v = manifest["verifier"]
        meta = emoexpl.VerifierMeta(v["model"], v["revision"], v["threshold"])
        assert lines == expected_lines(meta)
        assert any(c["lines"][0]["p_entailment"] is not None for c in json.loads(lines[0])["construals"])
    assert any(len(json.loads(line)["construals"]) == 2 for line in lines)


def test_unverified_lines_are_the_builders_records(gold_round, admin_user):
    lines, _ = exported_lines(admin_user, verify=False)
    assert len(lines) == 4
    assert lines == expected_lines(None)
