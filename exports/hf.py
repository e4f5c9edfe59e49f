"""An EmoExpl export as a Hugging Face ``datasets`` folder: what ``datasets.load_dataset(folder)``
reads, with a dataset card (``exports.hf_card``) whose YAML declares the configs, their files and
features, and whose body carries the figures (docs/export.md, "A Hugging Face datasets folder").

Three configs, each split ``train``/``test`` by the items' evidence tiers (an item in an ``eval``
item set is held out: ``test``; without a held-out item, ``train`` alone):

- ``gold`` (the default): one row per item of the archive's ``emoexpl.jsonl``, its first gold
  explication flat (the twelve slots as class labels, routing, provenance, lines) and the second,
  when kept, in ``second_construal``;
- ``contrast``: the archive's ``contrast.jsonl``, the minimal pairs written from the exported items;
- ``raw``: every revision of every annotator's work in the rounds the gold comes from
  (``exports.raw_export.raw_rows``, read from the database now).

The folder is built from the archive the export job wrote (and the raw rows and figures from the
database). Splits are JSONL; Parquet when asked for and ``pyarrow`` is importable. A folder is
written whole under a hidden name beside its place and renamed into it; the job's zip of it is
written beside the archive the same way."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from django.utils.translation import gettext as _

from annotator.models import ItemSet, ItemSetMember, Round
from contrasts.split import CONTRAST_NAME
from exports.export import ARCHIVE_STEPS, ExportParams
from exports.hf_card import card_figures, card_text
from exports.raw_export import raw_rows
from jobs.models import Job
from nsmcore import emoexpl
from nsmcore.schema import SLOT_NAMES, SLOTS

FORMATS = ("jsonl", "parquet")
GOLD, CONTRAST, RAW = "gold", "contrast", "raw"
CONFIGS = (GOLD, CONTRAST, RAW)
TRAIN, TEST = "train", "test"
HELD_OUT = ItemSet.Tier.EVAL.value
#: rows a Parquet split holds in memory before it writes them as a row group
PARQUET_ROWS = 5000
HF_SUFFIX = "-hf.zip"


class HfError(ValueError):
    """Bad input for a datasets folder (a format, a folder, a licence): the message names it."""


# Checks ----------------------------------------------------------------------------------------


def parquet_available() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def format_check(format: str) -> None:
    if format not in FORMATS:
        raise HfError(
            _("unknown format %(format)s; formats: %(formats)s")
            % {"format": repr(format), "formats": ", ".join(FORMATS)}
        )
    if format == "parquet" and not parquet_available():
        raise HfError(
            _("Parquet splits need pyarrow, which is not installed here; install pyarrow or write JSONL")
        )


def folder_check(folder: Path) -> None:
    """A datasets folder is written into a new folder or an empty one, never over other files."""
    if folder.exists() and not folder.is_dir():
        raise HfError(_("%(path)s is a file, not a folder") % {"path": folder})
    if folder.is_dir() and any(folder.iterdir()):
        raise HfError(_("%(path)s is not empty; give a new or empty folder") % {"path": folder})


def license_check(license: str) -> None:
    """A Hub licence identifier (cc-by-4.0, mit, other...): lower case, digits, . + -."""
    if not license or not all((c.isalnum() and not c.isupper()) or c in ".+-" for c in license):
        raise HfError(
            _("licence %(license)s: give a Hub licence identifier such as cc-by-4.0, mit or other")
            % {"license": repr(license)}
        )


# Features (the card's dataset_info, in the datasets YAML form) -----------------------------------


def _value(name: str, dtype: str = "string") -> dict[str, Any]:
    return {"name": name, "dtype": dtype}


def _label(name: str, names: Iterable[str]) -> dict[str, Any]:
    return {"name": name, "dtype": {"class_label": {"names": {str(i): n for i, n in enumerate(names)}}}}


def _struct(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "struct": fields}


def _list(name: str, inner: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "list": inner}


SLOT_FEATURES = [_label(slot.name, slot.values) for slot in SLOTS]
PROVENANCE = _struct(
    "provenance",
    [
        _struct(
            name, [_value("source"), _value("convention", "int32"), _value("version", "int32"), _value("by")]
        )
        for name in SLOT_NAMES
    ],
)
LINE_FIELDS = ("slot", "value", "text", "p_entailment", "p_neutral", "p_contradiction", "entailed")
LINES = _list(
    "lines",
    [
        _value("slot"), _value("value"), _value("text"), _value("p_entailment", "float64"),
        _value("p_neutral", "float64"), _value("p_contradiction", "float64"), _value("entailed", "bool"),
    ],
)  # fmt: skip
CONSTRUAL = [
    *SLOT_FEATURES, _value("residue"), _value("notes"), _value("label"), _value("rule", "int32"),
    _list("fired", "string"), _value("abstention"), _value("rule_set_version"), PROVENANCE, LINES,
]  # fmt: skip
GOLD_FEATURES = [
    _value("id"), _value("source"), _value("source_id"), _value("text"), _value("masked_text"),
    _value("premise_field"), _value("reference_label"), _list("tiers", [_value("tier"), _value("item_set")]),
    _value("round"), _list("pivotal_slots", "string"), *CONSTRUAL, _value("item_score", "float64"),
    _value("construals", "int32"), _struct("second_construal", CONSTRUAL),
]  # fmt: skip
_SIDE = [_value("text"), _value("emotion")]
CONTRAST_FEATURES = [
    _value("id"), _value("family"), _list("target_slots", "string"),
    _list("target_values", [_value("slot"), _list("values", "string")]), _struct("x", _SIDE),
    _struct("x_prime", _SIDE), _value("invariance", "bool"), _value("source"), _value("source_id"),
    _value("set"), _value("set_version", "int32"), _value("frozen", "bool"), _value("note"),
]  # fmt: skip
RAW_FEATURES = [
    _value("round"), _value("item_id", "int64"), _value("source"), _value("source_id"), _value("annotator"),
    _value("assignment", "int64"), _value("assignment_status"), _value("revision", "int32"),
    _value("latest", "bool"), *SLOT_FEATURES, _value("residue"), _value("notes"), _list("flags", "string"),
    _value("label"), _value("abstention"), _value("rule_set_version"), _value("prefilled", "bool"),
    _value("prefill_parser"), _value("prefill_parser_version"),
    _struct("prefill", [_value(name) for name in SLOT_NAMES]), _list("kept_prefill", "string"),
    _list("changed_from_prefill", "string"), _value("time_spent_ms", "int64"), _value("created_at"),
    _value("submitted_at"),
]  # fmt: skip
FEATURES = {GOLD: GOLD_FEATURES, CONTRAST: CONTRAST_FEATURES, RAW: RAW_FEATURES}


# Rows ------------------------------------------------------------------------------------------


def _slot(value: Any) -> str | None:
    return value or None  # an empty value is a missing label, not a class


def _construal(c: dict[str, Any]) -> dict[str, Any]:
    routing = c["routing"]
    provenance = c.get("provenance") or {}
    return {
        **{name: _slot(c["explication"].get(name)) for name in SLOT_NAMES},
        "residue": c["residue"], "notes": c["notes"], "label": routing["label"], "rule": routing["rule"],
        "fired": list(routing["fired"]), "abstention": routing["abstention"] or None,
        "rule_set_version": routing["rule_set_version"],
        "provenance": {
            name: (
                {key: provenance[name].get(key) for key in ("source", "convention", "version", "by")}
                if name in provenance else None
            )
            for name in SLOT_NAMES
        },
        "lines": [{key: line.get(key) for key in LINE_FIELDS} for line in c["lines"]],
    }  # fmt: skip


def gold_row(record: dict[str, Any]) -> dict[str, Any]:
    """One EmoExpl record as a row of the gold config: its first construal flat, the second nested."""
    first, *rest = record["construals"]
    return {
        "id": record["id"], "source": record["source"], "source_id": record["source_id"],
        "text": record["text"], "masked_text": record["masked_text"],
        "premise_field": record["premise_field"], "reference_label": record["reference_label"],
        "tiers": [{"tier": t["tier"], "item_set": t["item_set"]} for t in record["tiers"]],
        "round": record["round"], "pivotal_slots": list(record["pivotal_slots"]), **_construal(first),
        "item_score": record["item_score"], "construals": len(record["construals"]),
        "second_construal": _construal(rest[0]) if rest else None,
    }  # fmt: skip


def record_split(record: dict[str, Any]) -> str:
    """An item in a held-out (eval) item set is test; every other item is train."""
    return TEST if any(t["tier"] == HELD_OUT for t in record["tiers"]) else TRAIN


def contrast_row(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": record["id"], "family": record["family"], "target_slots": list(record["target_slots"]),
        "target_values": [
            {"slot": slot, "values": list(values)} for slot, values in record["target_values"].items()
        ],
        "x": {"text": record["x"]["text"], "emotion": record["x"]["emotion"]},
        "x_prime": {"text": record["x_prime"]["text"], "emotion": record["x_prime"]["emotion"]},
        "invariance": bool(record["invariance"]), "source": record["source"],
        "source_id": record["source_id"], "set": record["set"], "set_version": record["set_version"],
        "frozen": bool(record["frozen"]), "note": record["note"],
    }  # fmt: skip


def raw_row(row: dict[str, Any]) -> dict[str, Any]:
    prefill = row["prefill"]
    return {
        **row,
        **{name: _slot(row[name]) for name in SLOT_NAMES},
        "abstention": row["abstention"] or None,
        "prefill": {name: prefill.get(name) for name in SLOT_NAMES} if prefill else None,
    }


# Writing ---------------------------------------------------------------------------------------


def _arrow_type(feature: dict[str, Any] | str):
    import pyarrow as pa

    if isinstance(feature, str):
        return {"string": pa.string(), "bool": pa.bool_()}.get(feature) or getattr(pa, feature)()
    if "struct" in feature:
        return pa.struct([pa.field(f["name"], _arrow_type(f)) for f in feature["struct"]])
    if "list" in feature:
        inner = feature["list"]
        return pa.list_(_arrow_type(inner if isinstance(inner, str) else {"struct": inner}))
    dtype = feature["dtype"]
    # a class label is stored as its name; datasets casts it to the label's index when loading
    return pa.string() if isinstance(dtype, dict) else _arrow_type(dtype)


class Split:
    """One split's file being written (JSONL lines, or Parquet row groups); counts its rows."""

    def __init__(self, path: Path, format: str, features: list[dict[str, Any]]):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.format, self.rows = path, format, 0
        self.buffer: list[dict[str, Any]] = []
        if format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            self.schema = pa.schema([pa.field(f["name"], _arrow_type(f)) for f in features])
            self.writer = pq.ParquetWriter(path, self.schema)
        else:
            self.file = path.open("w", encoding="utf-8", newline="\n")

    def write(self, row: dict[str, Any]) -> None:
        self.rows += 1
        if self.format == "parquet":
            self.buffer.append(row)
            if len(self.buffer) >= PARQUET_ROWS:
                self._flush()
        else:
            self.file.write(emoexpl.dumps(row) + "\n")

    def _flush(self) -> None:
        import pyarrow as pa

        if self.buffer:
            self.writer.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema))
            self.buffer = []

    def close(self) -> None:
        if self.format == "parquet":
            self._flush()
            self.writer.close()
        else:
            self.file.close()


class ConfigWriter:
    """A config's splits, opened as rows come: a split with no row has no file."""

    def __init__(self, root: Path, name: str, format: str):
        self.root, self.name, self.format = root, name, format
        self.splits: dict[str, Split] = {}

    def write(self, split: str, row: dict[str, Any]) -> None:
        if split not in self.splits:
            path = self.root / self.name / f"{split}.{self.format}"
            self.splits[split] = Split(path, self.format, FEATURES[self.name])
        self.splits[split].write(row)

    def close(self) -> dict[str, dict[str, Any]]:
        """split -> {path (relative to the folder), rows, bytes (of the file)}, train first."""
        out = {}
        for split in sorted(self.splits, key=lambda s: (s != TRAIN, s)):
            self.splits[split].close()
            written = self.splits[split]
            out[split] = {
                "path": f"{self.name}/{split}.{self.format}", "rows": written.rows,
                "bytes": written.path.stat().st_size,
            }  # fmt: skip
        return out


def _records(archive: zipfile.ZipFile, name: str) -> Iterator[dict[str, Any]]:
    with archive.open(name) as file:
        for line in file:
            if line.strip():
                yield json.loads(line)


def _held_out_items() -> set[int]:
    return set(
        ItemSetMember.objects.filter(item_set__tier=HELD_OUT).values_list("item_id", flat=True).distinct()
    )


def _write_configs(archive: Path, root: Path, format: str) -> tuple[dict[str, Any], dict, list[Round]]:
    """The three configs' files under ``root``: (manifest, config -> split -> file, the rounds)."""
    configs: dict[str, dict[str, dict[str, Any]]] = {}
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read(emoexpl.MANIFEST_NAME))
        gold, split_of, round_names = ConfigWriter(root, GOLD, format), {}, set()
        try:
            for record in _records(zf, emoexpl.JSONL_NAME):
                split_of[record["id"]] = split = record_split(record)
                round_names.add(record["round"])
                gold.write(split, gold_row(record))
        finally:
            configs[GOLD] = gold.close()
        if CONTRAST_NAME in zf.namelist():
            contrast = ConfigWriter(root, CONTRAST, format)
            try:
                for record in _records(zf, CONTRAST_NAME):
                    split = split_of.get(f"{record['source']}:{record['source_id']}", TRAIN)
                    contrast.write(split, contrast_row(record))
            finally:
                configs[CONTRAST] = contrast.close()
    rounds = list(Round.objects.filter(name__in=round_names).order_by("pk"))
    raw, held_out = ConfigWriter(root, RAW, format), _held_out_items()
    try:
        for round_ in rounds:
            for chunk in raw_rows(round_):
                for row in chunk:
                    raw.write(TEST if row["item_id"] in held_out else TRAIN, raw_row(row))
    finally:
        configs[RAW] = raw.close()
    return manifest, {name: splits for name, splits in configs.items() if splits}, rounds


def hf_folder_fill(archive: Path, root: Path, *, format: str = "jsonl", license: str = "") -> dict[str, Any]:
    """Write the datasets folder of ``archive`` into ``root`` (new or empty): the configs' splits and
    README.md, the dataset card. Returns what was written: config -> split -> {path, rows}."""
    format_check(format)
    manifest, configs, rounds = _write_configs(archive, root, format)
    license = license or manifest.get("license") or "other"
    license_check(license)
    card = card_text(
        manifest=manifest, configs=configs, features=FEATURES, figures=card_figures(rounds),
        license=license, archive=archive.name,
    )  # fmt: skip
    (root / "README.md").write_text(card, encoding="utf-8", newline="\n")
    return configs


def hf_folder_write(
    archive: Path, folder: Path, *, format: str = "jsonl", license: str = ""
) -> dict[str, Any]:
    """The datasets folder at ``folder`` (new or empty), written whole under a hidden name beside
    it and renamed into place: an error leaves nothing."""
    format_check(format)
    folder_check(folder)
    if license:
        license_check(license)
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f"{emoexpl.TEMP_PREFIX}hf-", dir=folder.parent))
    try:
        configs = hf_folder_fill(archive, temp, format=format, license=license)
        if folder.is_dir():
            folder.rmdir()  # empty (folder_check): the finished folder takes its place
        os.replace(temp, folder)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return configs


def hf_zip_path(archive: Path) -> Path:
    """Where an archive's zipped datasets folder lies: beside it, ``<archive name>-hf.zip``."""
    return archive.with_name(archive.stem + HF_SUFFIX)


def hf_zip_write(archive: Path, *, tag: str, license: str = "") -> Path:
    """The archive's datasets folder (JSONL splits), zipped beside it, written under a hidden name
    and renamed when complete. Deterministic like the archive: fixed dates, files in path order."""
    with tempfile.TemporaryDirectory(prefix=f"{emoexpl.TEMP_PREFIX}hf-") as temp:
        root = Path(temp) / "folder"
        root.mkdir()
        hf_folder_fill(archive, root, license=license)
        emoexpl.remove_partials(archive.parent, tag)
        with emoexpl.atomic_archive(archive.parent, tag=tag) as pending:
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                pending.writer.add(path.relative_to(root).as_posix(), path.read_bytes())
            pending.name = hf_zip_path(archive).name
    return hf_zip_path(archive)


def hf_zip_beside(job: Job, params: ExportParams, archive: Path) -> None:
    """The export job's step (exports.export.ARCHIVE_STEPS), when asked for: the zip beside the
    archive; when it cannot be written, the archive goes too, so that the job leaves nothing
    without its history row."""
    if not params.hf:
        return
    try:
        hf_zip_write(archive, tag=f"hf{job.pk}")
    except BaseException:
        archive.unlink(missing_ok=True)
        raise


ARCHIVE_STEPS.append(hf_zip_beside)  # declared with the export kind (exports.apps): imported whenever it is
