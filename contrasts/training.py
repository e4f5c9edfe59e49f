"""The minimal pairs as training data (issue 26: "parser training can use pairs"): a train job
whose passes name ``pairs`` also learns each rewritten text with the explication it is meant to
have, the source item's resolved gold with the target slots flipped (an invariance pair: the gold
itself). Only the newest frozen version of each set is read, and only pairs written from items in
the job's scope: a pair from a held-out item is refused with it (the records carry the item's id)."""

from __future__ import annotations

from typing import Any

from annotator.models import Round
from contrasts.models import MinimalPair
from contrasts.selectors import gold_values, newest_frozen_sets

PAIRS = "pairs"


def pair_records(members: Any, round_: Round | None) -> list[dict[str, Any]]:
    """Training records of the frozen pairs over the scope's items (``members``: their ids); a pair
    whose item has no resolved gold has no explication to learn, and is left out."""
    pairs = list(
        MinimalPair.objects.filter(pair_set__in=newest_frozen_sets(), item_id__in=members)
        .select_related("item", "pair_set")
        .order_by("pair_set__name", "id")
    )
    gold = gold_values({p.item_id for p in pairs})
    records = []
    for k, pair in enumerate(pairs, 1):
        if pair.item_id not in gold:
            continue
        explication = gold[pair.item_id] | {name: values[1] for name, values in pair.targets.items()}
        records.append({
            "id": pair.item.source_id, "text": pair.text, "explication": explication,
            "source": f"{PAIRS}:{pair.pair_set.spec}", "construal": k,
        })  # fmt: skip
    return records
