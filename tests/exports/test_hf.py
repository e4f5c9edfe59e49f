"""The Hugging Face datasets folder of an EmoExpl export (exports.hf): ``datasets.load_dataset``
reads each config (gold, contrast, raw) with the features the card declares and the values of the
archive and the database; held-out items are the test split; the card's figures equal those the
agreement and evaluation APIs give for the same round; JSONL and Parquet load the same; the zip is
deterministic; nothing partial is left by an error."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import datasets
import pytest
import yaml
from django.core.cache import cache, caches
from django.utils import timezone

import nsmcore
from adjudication.agreement.analysis import anchoring
from adjudication.models import Convention
from annotator.models import ItemSet
from annotator.sampling import item_set_from_items
from contrasts.services import pair_add, pair_set_create, pair_set_freeze
from exports import export as export_module
from exports import hf
from exports.hf import FEATURES, HfError, hf_folder_write, hf_zip_write
from exports.raw_export import raw_rows
from nsmcore.schema import SLOT_BY_NAME, SLOT_NAMES
from rules.rulesets import active_rule_set

pytestmark = pytest.mark.django_db
FLIP_TEXT = "I was happy when my sister won the chess final."


def make_archive(round_, folder: Path) -> tuple[Path, dict]:
    export_module.export_prepare(round_)
    return export_module.export_write(round_=round_, verifier=None, folder=folder, tag="t")


def archive_records(path: Path, name: str = "emoexpl.jsonl") -> list[dict]:
    with zipfile.ZipFile(path) as zf:
        return [json.loads(line) for line in zf.read(name).decode().splitlines()]


def load(folder: Path, config: str | None, cache_dir: Path) -> datasets.DatasetDict:
    return datasets.load_dataset(str(folder), config, cache_dir=str(cache_dir))


def names(features: list[dict]) -> list[str]:
    return [f["name"] for f in features]


def front_matter(card: str) -> dict:
    head, sep, _ = card.removeprefix("---\n").partition("\n---\n")
    assert sep, "the card starts with YAML front matter"
    return yaml.safe_load(head)


def section(card: str, title: str) -> str:
    """The text of a level-2 section of the card."""
    start = card.index(f"\n## {title}\n")
    end = card.find("\n## ", start + 1)
    return card[start : end if end > 0 else None]


def table(text: str) -> list[list[str]]:
    """The rows (cells) of the first markdown table in ``text``, header and rule left out."""
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


@pytest.fixture
def frozen_pairs(gold_round, adjudicator):
    """A frozen set of two minimal pairs over t1-0 and t4-0 (the archive's contrast file)."""
    pair_set = pair_set_create(user=adjudicator, name="hf-pairs")
    items = {i.source_id: i for i in gold_round.item_set.items.all()}
    pair_add(
        user=adjudicator, pair_set=pair_set, item="t1-0", text=FLIP_TEXT, targets={"agency": "someone-else"},
        expected="joy", family="F-agency",
    )  # fmt: skip
    pair_add(
        user=adjudicator, pair_set=pair_set, item="t4-0", text=items["t4-0"].text + " Again.", invariance=True
    )
    return pair_set_freeze(user=adjudicator, pair_set=pair_set)


@pytest.fixture
def held_out(gold_round):
    """t4-0 is also in a held-out (eval) item set: the test split."""
    item = gold_round.item_set.items.get(source_id="t4-0")
    return item_set_from_items(name="held-out", items=[item], tier=ItemSet.Tier.EVAL)


def test_load_dataset_reads_each_config_with_the_declared_features(
    gold_round, frozen_pairs, held_out, tmp_path
):
    path, _ = make_archive(gold_round, tmp_path / "exports")
    folder = tmp_path / "hf"
    configs = hf_folder_write(path, folder)
    assert {name: {s: f["rows"] for s, f in splits.items()} for name, splits in configs.items()} == {
        "gold": {"train": 3, "test": 1},
        "contrast": {"train": 1, "test": 1},
        "raw": {"train": 6, "test": 2},
    }
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "README.md", "contrast/test.jsonl", "contrast/train.jsonl", "gold/test.jsonl", "gold/train.jsonl",
        "raw/test.jsonl", "raw/train.jsonl",
    ]  # fmt: skip

    gold = load(folder, None, tmp_path / "cache")  # gold is the default config
    assert list(gold) == ["train", "test"]
    features = gold["train"].features
    assert list(features) == names(FEATURES["gold"])
    for slot in SLOT_NAMES:  # each slot a class label over its closed vocabulary
        assert features[slot].names == list(SLOT_BY_NAME[slot].values)
    records = {r["id"]: r for r in archive_records(path)}
    assert [row["id"] for row in gold["test"]] == ["test:t4-0"]
    assert [row["id"] for row in gold["train"]] == ["test:t1-0", "test:t2-0", "test:t3-0"]

    row = gold["train"][0]
    record = records[row["id"]]
    first = record["construals"][0]
    assert {slot: features[slot].int2str(row[slot]) for slot in SLOT_NAMES} == first["explication"]
    assert row["agency"] == features["agency"].str2int("i")  # adjudicated by hand in gold_round
    assert row["provenance"]["agency"] == {
        "source": "adjudicated",
        "convention": None,
        "version": None,
        "by": "carol",
    }
    assert (row["label"], row["rule"], row["fired"]) == (
        first["routing"]["label"], first["routing"]["rule"], first["routing"]["fired"],
    )  # fmt: skip
    assert row["abstention"] is None and row["construals"] == 1 and row["second_construal"] is None
    assert [(line["slot"], line["text"]) for line in row["lines"]] == [
        (x["slot"], x["text"]) for x in first["lines"]
    ]
    assert row["tiers"] == record["tiers"] and row["text"] == record["text"]

    two = gold["train"][2]  # t3-0, kept with two construals
    second = records["test:t3-0"]["construals"][1]
    assert two["construals"] == 2
    nested = two["second_construal"]
    assert (
        features["second_construal"]["intensity"].int2str(nested["intensity"])
        == second["explication"]["intensity"]
    )
    assert nested["label"] == second["routing"]["label"]

    contrast = load(folder, "contrast", tmp_path / "cache")
    assert list(contrast["train"].features) == names(FEATURES["contrast"])
    flip = contrast["train"][0]
    assert (flip["family"], flip["source_id"], flip["set"], flip["frozen"]) == (
        "F-agency",
        "t1-0",
        "hf-pairs",
        True,
    )
    pair = archive_records(path, "contrast.jsonl")[0]  # the archive's: a dict by slot, here a list
    assert flip["target_values"] == [{"slot": "agency", "values": pair["target_values"]["agency"]}]
    assert flip["target_values"][0]["values"] == ["i", "someone-else"]
    assert flip["x_prime"] == {"text": FLIP_TEXT, "emotion": "joy"}
    assert contrast["test"][0]["invariance"] is True and contrast["test"][0]["source_id"] == "t4-0"

    raw = load(folder, "raw", tmp_path / "cache")
    assert list(raw["train"].features) == names(FEATURES["raw"])
    expected = [r for chunk in raw_rows(gold_round) for r in chunk]
    assert len(raw["train"]) + len(raw["test"]) == len(expected) == 8
    assert {r["source_id"] for r in raw["test"]} == {"t4-0"}
    first_raw, want = raw["train"][0], expected[0]
    assert (first_raw["annotator"], first_raw["revision"], first_raw["label"]) == (
        want["annotator"], want["revision"], want["label"],
    )  # fmt: skip
    assert raw["train"].features["intensity"].int2str(first_raw["intensity"]) == want["intensity"]
    assert first_raw["prefill"] == {slot: want["prefill"][slot] for slot in SLOT_NAMES}


def test_without_a_held_out_item_every_config_is_one_train_split(gold_round, tmp_path):
    path, _ = make_archive(gold_round, tmp_path / "exports")
    configs = hf_folder_write(path, tmp_path / "hf")
    assert {name: list(splits) for name, splits in configs.items()} == {"gold": ["train"], "raw": ["train"]}
    meta = front_matter((tmp_path / "hf" / "README.md").read_text())
    assert [c["config_name"] for c in meta["configs"]] == ["gold", "raw"]
    assert meta["configs"][0] == {
        "config_name": "gold", "default": True,
        "data_files": [{"split": "train", "path": "gold/train.jsonl"}],
    }  # fmt: skip
    assert load(tmp_path / "hf", "gold", tmp_path / "cache")["train"].num_rows == 4


def test_the_cards_figures_are_those_of_the_agreement_and_evaluation_reports(
    client, gold_round, adjudicator, tmp_path
):
    Convention.objects.create(
        number=1, version=1, slot="agency", value_a="i", value_b="someone-else", chosen="someone-else",
        rule="When another person acts, agency is someone-else.", status=Convention.Status.SUPERSEDED,
        round=gold_round, proposer=adjudicator, decided_at=timezone.now(),
    )  # fmt: skip
    Convention.objects.create(
        number=1, version=2, slot="agency", value_a="i", value_b="someone-else", chosen="i",
        rule="The writer's own act is agency i.", status=Convention.Status.ACCEPTED, round=gold_round,
        proposer=adjudicator, decided_at=timezone.now(),
    )  # fmt: skip
    path, manifest = make_archive(gold_round, tmp_path / "exports")
    hf_folder_write(path, tmp_path / "hf", license="cc-by-4.0")
    card = (tmp_path / "hf" / "README.md").read_text()

    meta = front_matter(card)
    assert (meta["license"], meta["language"], meta["task_categories"]) == (
        "cc-by-4.0", ["en"], ["text-classification"],
    )  # fmt: skip
    assert "EmoExpl" in meta["pretty_name"]
    gold_info = meta["dataset_info"][0]
    assert gold_info["config_name"] == "gold" and names(gold_info["features"]) == names(FEATURES["gold"])
    trigger = next(f for f in gold_info["features"] if f["name"] == "trigger")
    assert list(trigger["dtype"]["class_label"]["names"].values()) == list(SLOT_BY_NAME["trigger"].values)
    assert gold_info["splits"] == [
        {
            "name": "train",
            "num_bytes": (tmp_path / "hf" / "gold" / "train.jsonl").stat().st_size,
            "num_examples": 4,
        }
    ]

    # the figures, computed afresh by the APIs the pages use, for the same round
    caches["analysis"].clear()
    cache.clear()
    client.force_login(adjudicator)
    agreement = client.get(f"/api/rounds/{gold_round.pk}/agreement/").json()
    evaluation = client.get(f"/api/rounds/{gold_round.pk}/evaluation/", {"pass": "gold"}).json()

    rows = {row[0]: row for row in table(section(card, "Agreement per slot"))}
    assert list(rows) == list(SLOT_NAMES)
    defined = 0
    for slot in agreement["slots"]:
        _, alpha, ci, raw, items = rows[slot["slot"]]
        assert raw == f"{slot['raw']:.4f}" and items == str(slot["items"])
        if slot["alpha"] is None:
            assert alpha.startswith("undefined") and ci == "-"
        else:
            defined += 1
            assert alpha == f"{slot['alpha']:.4f}"
            assert ci == f"[{slot['ci_low']:.4f}, {slot['ci_high']:.4f}]"
    assert defined == 2  # agency and intensity vary in gold_round
    assert f"{agreement['coders']} annotators, {agreement['items']} items" in section(
        card, "Agreement per slot"
    )
    assert f"mean alpha {agreement['mean_alpha']:.4f}" in card

    figures = {row[0]: row for row in table(section(card, "Gold against the reference labels"))}
    for name in ("accuracy", "abstention", "selective_accuracy", "set_accuracy"):
        figure = evaluation["headline"][name]
        label = {"selective_accuracy": "selective accuracy", "set_accuracy": "set-valued accuracy"}.get(
            name, name
        )
        low, high = figure["ci"]
        assert figures[label][1:] == [
            f"{figure['value']:.4f}",
            f"[{low:.4f}, {high:.4f}]",
            str(figure["k"]),
            str(figure["n"]),
        ], name

    kept = {row[0]: row for row in table(section(card, "Anchoring"))}
    for row in anchoring(gold_round):
        assert kept[row.annotator][1:4] == [
            str(row.annotations),
            f"{row.overall:.4f}",
            f"{row.kept['experiencer']:.4f}",
        ]
        assert kept[row.annotator][3 + SLOT_NAMES.index("agency")] == f"{row.kept['agency']:.4f}"

    changelog = table(section(card, "Convention changelog"))
    assert [(r[0], r[3], r[4]) for r in changelog] == [
        ("C1 v1", "someone-else", "superseded"),
        ("C1 v2", "i", "accepted"),
    ]
    versions = section(card, "Versions")
    rule_set = active_rule_set()
    assert f"version {rule_set.version}, content hash `{rule_set.content_hash}`" in versions
    assert f"Renderer: version {nsmcore.RENDERER_VERSION}" in versions
    assert manifest["files"]["emoexpl.jsonl"]["sha256"] in versions and path.name in versions


def test_parquet_splits_load_as_the_jsonl_ones(gold_round, held_out, tmp_path):
    path, _ = make_archive(gold_round, tmp_path / "exports")
    hf_folder_write(path, tmp_path / "jsonl")
    configs = hf_folder_write(path, tmp_path / "parquet", format="parquet")
    assert configs["gold"]["train"]["path"] == "gold/train.parquet"
    assert "path: gold/train.parquet" in (tmp_path / "parquet" / "README.md").read_text()
    for config in ("gold", "raw"):
        a = load(tmp_path / "jsonl", config, tmp_path / "cache-a")
        b = load(tmp_path / "parquet", config, tmp_path / "cache-b")
        for split in ("train", "test"):
            assert b[split].features == a[split].features
            assert b[split].to_list() == a[split].to_list()


def test_the_zip_is_the_same_bytes_from_the_same_archive(gold_round, tmp_path):
    path, _ = make_archive(gold_round, tmp_path / "exports")
    first = hf_zip_write(path, tag="a").read_bytes()
    again = hf_zip_write(path, tag="b")
    assert again == path.with_name(path.stem + "-hf.zip") and again.read_bytes() == first
    with zipfile.ZipFile(again) as zf:
        assert zf.namelist() == ["README.md", "gold/train.jsonl", "raw/train.jsonl"]
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, again.name])


def test_bad_input_is_refused_and_an_error_leaves_nothing(gold_round, tmp_path, monkeypatch):
    path, _ = make_archive(gold_round, tmp_path / "exports")
    afile = tmp_path / "a-file"
    afile.write_text("x")
    with pytest.raises(HfError, match="is a file, not a folder"):
        hf_folder_write(path, afile)
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    with pytest.raises(HfError, match="is not empty"):
        hf_folder_write(path, full)
    with pytest.raises(HfError, match="unknown format 'xml'; formats: jsonl, parquet"):
        hf_folder_write(path, tmp_path / "new", format="xml")
    with pytest.raises(HfError, match="licence 'CC BY'"):
        hf_folder_write(path, tmp_path / "new", license="CC BY")
    monkeypatch.setattr(hf, "parquet_available", lambda: False)
    with pytest.raises(HfError, match="Parquet splits need pyarrow"):
        hf_folder_write(path, tmp_path / "new", format="parquet")
    monkeypatch.undo()

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(hf, "card_figures", broken)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RuntimeError, match="disk full"):
        hf_folder_write(path, empty)
    assert [p.name for p in empty.iterdir()] == []  # the empty folder stays empty
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "empty", "exports", "full"]
    assert [p.name for p in full.iterdir()] == ["keep.txt"]
    assert not any(re.match(r"\.partial-", p.name) for p in path.parent.iterdir())
