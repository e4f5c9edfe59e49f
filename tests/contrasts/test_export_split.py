"""The minimal pairs are exported as the corpus's contrast split: the newest frozen version of each
set, over the exported items, in the archive beside the gold and named by the manifest."""

import hashlib
import json
import zipfile

import pytest

from contrasts.services import pair_set_freeze, pair_set_new_version
from exports import export as export_module

pytestmark = pytest.mark.django_db


def archive(round_, folder):
    export_module.export_prepare(round_)
    path, manifest = export_module.export_write(round_=round_, verifier=None, folder=folder, tag="t")
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        lines = zf.read("contrast.jsonl").decode().splitlines() if "contrast.jsonl" in names else []
    return manifest, [json.loads(line) for line in lines], path


def test_an_open_set_is_not_exported_and_a_frozen_one_is(gold_round, pair_set, adjudicator, tmp_path):
    manifest, records, _ = archive(gold_round, tmp_path / "open")
    assert records == [] and manifest["contrast"] == {"sets": [], "pairs": 0}
    assert "contrast.jsonl" not in manifest["files"]

    frozen = pair_set_freeze(user=adjudicator, pair_set=pair_set)
    pair_set_new_version(user=adjudicator, pair_set=frozen)  # v2, open: v1 is what is released
    manifest, records, path = archive(gold_round, tmp_path / "frozen")
    assert manifest["contrast"] == {"sets": ["pilot-pairs@v1"], "pairs": 3}
    assert [r["family"] for r in records] == ["F-agency", "invariance", "F-intensity"]
    assert records[1]["invariance"] and records[1]["x_prime"]["emotion"] == records[1]["x"]["emotion"]
    with zipfile.ZipFile(path) as zf:
        raw = zf.read("contrast.jsonl")
    assert manifest["files"]["contrast.jsonl"] == {
        "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), "records": 3,
    }  # fmt: skip
