"""A set as the corpus's contrast split: one JSON object a line in the counterfactual benchmark's
format (docs/evaluation.md), so that ``python -m nsmcore evaluate --counterfactual FILE
[--parser ...]`` scores it outside the tool, with where each pair came from beside it."""

from __future__ import annotations

import json
from typing import Any

from contrasts.models import PairSet
from contrasts.selectors import newest_frozen_sets


def contrast_records(pair_set: PairSet, item_ids: set[int] | None = None) -> list[dict[str, Any]]:
    """The set's pairs as records (only those written from ``item_ids`` when given)."""
    records = []
    pairs = pair_set.pairs.select_related("item").order_by("id")
    for k, pair in enumerate(pairs, 1):
        if item_ids is not None and pair.item_id not in item_ids:
            continue
        item = pair.item
        records.append({
            "id": f"{pair_set.spec}#{k}", "family": pair.family, "target_slots": list(pair.targets),
            "target_values": {slot: list(values) for slot, values in pair.targets.items()},
            "x": {"text": item.text, "emotion": item.reference_label},
            "x_prime": {"text": pair.text, "emotion": pair.expected_label()},
            "invariance": pair.invariance, "source": item.source, "source_id": item.source_id,
            "set": pair_set.name, "set_version": pair_set.version, "frozen": not pair_set.is_open,
            "note": pair.note,
        })  # fmt: skip
    return records


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def contrast_jsonl(pair_set: PairSet) -> str:
    return _jsonl(contrast_records(pair_set))


CONTRAST_NAME = "contrast.jsonl"


def export_split(item_ids: set[int]) -> tuple[str, list[str], int]:
    """The contrast split an export carries: the pairs over ``item_ids`` (the export's gold items)
    of the newest *frozen* version of each set (an open set is still being written, so no release
    carries it), as (JSONL, the sets' specs, the number of pairs)."""
    records, specs = [], []
    for pair_set in newest_frozen_sets():
        chosen = contrast_records(pair_set, item_ids)
        if chosen:
            specs.append(pair_set.spec)
            records += chosen
    return _jsonl(records), specs, len(records)
