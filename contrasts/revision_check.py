"""The minimal pairs a rule revision changes: registered with rules.revision_checks from
ContrastsConfig.ready, so that a proposal's regression report lists them.

For each pair of the newest version of every set, the *intended* explication of its rewritten
text is routed under the old and the new rule set:

- the source item's resolved gold (its first construal) when it has one, as it stands now, with
  each target slot set to the value the pair flips it to;
- otherwise the pair's stated "from" values over the schema's defaults, the target slots set
  likewise. An invariance pair of an item without gold states no slot, so it says nothing about
  the rules and is counted as skipped.

The residue is left out: it belongs to the item's text, not to the rewrite. A pair is listed
when the label changes, with whether the new label is still the pair's expected label.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Max
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_noop

import nsmcore
from contrasts.models import MinimalPair, PairSet
from contrasts.selectors import gold_values
from nsmcore.mapper import route_batch
from nsmcore.schema import SLOTS

TEXT_SHOWN = 120
COLUMNS = [
    ["set", gettext_noop("set")],
    ["source_id", gettext_noop("item")],
    ["family", gettext_noop("family")],
    ["text", gettext_noop("rewritten text")],
    ["expected", gettext_noop("expected label")],
    ["old", gettext_noop("label before")],
    ["new", gettext_noop("label after")],
    ["still_expected", gettext_noop("still the expected label")],
]


def intended_explication(pair: MinimalPair, gold: dict[str, str] | None) -> tuple[dict[str, str] | None, str]:
    """(the explication x' is meant to have, "gold" or "stated"); None for an invariance pair
    of an item without gold."""
    if gold is None and pair.invariance:
        return None, "stated"
    if gold is not None:
        base, source = dict(gold), "gold"
    else:
        base = {slot.name: slot.default for slot in SLOTS}
        base |= {name: values[0] for name, values in pair.targets.items()}
        source = "stated"
    return base | {name: values[1] for name, values in pair.targets.items()}, source


def newest_sets() -> list[PairSet]:
    newest = PairSet.objects.values("name").annotate(top=Max("version"))
    wanted = {(row["name"], row["top"]) for row in newest}
    return [s for s in PairSet.objects.order_by("name") if (s.name, s.version) in wanted]


def pairs_changed_by(old: nsmcore.RuleSet, new: nsmcore.RuleSet) -> dict[str, Any]:
    """The revision-check section (rules.revision_checks): the pairs whose intended rewritten
    explication routes to another label under ``new`` than under ``old``."""
    sets = newest_sets()
    pairs = list(
        MinimalPair.objects.filter(pair_set__in=sets)
        .select_related("item", "pair_set")
        .order_by("pair_set__name", "id")
    )
    gold = gold_values({p.item_id for p in pairs})
    checked: list[tuple[MinimalPair, dict[str, str], str]] = []
    for pair in pairs:
        explication, source = intended_explication(pair, gold.get(pair.item_id))
        if explication is not None:
            checked.append((pair, explication, source))
    before = route_batch([e for _, e, _ in checked], old) if checked else []
    after = route_batch([e for _, e, _ in checked], new) if checked else []
    rows = []
    for (pair, _explication, source), a, b in zip(checked, before, after, strict=True):
        if a.label == b.label:
            continue
        expected = pair.expected_label()
        rows.append({
            "pair": pair.pk, "set": pair.pair_set.spec, "set_id": pair.pair_set_id, "item_id": pair.item_id,
            "source_id": pair.item.source_id, "family": pair.family, "text": pair.text[:TEXT_SHOWN],
            "invariance": pair.invariance, "expected": expected, "old": a.label, "new": b.label,
            "still_expected": b.label == expected, "was_expected": a.label == expected,
            "explication_from": source, "url": _url(pair),
        })  # fmt: skip
    return {
        "title": gettext_noop("Minimal pairs whose label the revision changes"),
        "columns": COLUMNS,
        "rows": rows,
        "sets": [s.spec for s in sets],
        "pairs": len(checked),
        "skipped": len(pairs) - len(checked),
        "changed": len(rows),
        "no_longer_expected": sum(1 for r in rows if r["was_expected"] and not r["still_expected"]),
        "now_expected": sum(1 for r in rows if r["still_expected"]),
    }


def _url(pair: MinimalPair) -> str:
    try:
        return reverse("contrast_set", args=[pair.pair_set_id]) + f"#pair-{pair.pk}"
    except NoReverseMatch:  # the pages are not mounted (config/urls.py)
        return ""
