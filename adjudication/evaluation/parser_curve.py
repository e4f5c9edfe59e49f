"""Registered parsers on one held-out set, by training size: the learning curve a team builds as
it trains parsers on more data (issue 23; docs/training.md, "Registered parsers by training
size").

For a round's resolved gold (construal 1) and a held-out item set, every registered parser with
predictions for its items is scored as the parser-vs-gold table scores one: per-slot accuracy
against gold (mean over the twelve slots) and routed accuracy against the reference labels (an
abstention counts as a miss; exact 95% interval), on the held-out items that have gold, a
reference label and a prediction of that parser read from the round's text field. A parser
trained on any held-out item is not scored: it is listed with the reason, as the parser-vs-gold
page refuses it. Points are ordered by training size (the items the parser was trained on), and
cached under the same versions as parser-vs-gold.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

from adjudication.evaluation.figures import CACHE_SECONDS, EvaluationRequestError
from adjudication.evaluation.parser import (
    explication_codes,
    newest_predictions,
    predictions_version,
    refuse_training_items,
    resolved_gold,
)
from annotator.models import Item, ItemSet, ParserPrediction, Round
from annotator.selectors import read_from
from nsmcore.charts import line_chart
from nsmcore.evaluation import Proportion
from nsmcore.legality import is_legal
from nsmcore.mapper import RuleSet, route
from nsmcore.schema import SLOTS
from registry.models import RegisteredParser


@dataclass(frozen=True)
class CurvePoint:
    spec: str  # NAME@VERSION
    parser: str  # the name its predictions carry
    trained: int  # items it was trained on
    scored: int  # held-out items with gold and its prediction
    slot_accuracy: float | None  # mean over slots; None when nothing is scored
    routed: Proportion | None
    refused: str = ""  # why it is not scored (trained on held-out items)
    selective: Proportion | None = None  # routed accuracy over the items the rules routed

    def to_dict(self) -> dict[str, Any]:
        routed, selective = self.routed, self.selective
        return {
            "parser": self.spec, "predictions": self.parser, "trained_on": self.trained,
            "scored": self.scored,
            "slot_accuracy": None if self.slot_accuracy is None else round(self.slot_accuracy, 4),
            "routed_accuracy": None if routed is None or routed.value is None else round(routed.value, 4),
            "routed_interval": None if routed is None or routed.low is None
            else [round(routed.low, 4), round(routed.high, 4)],
            "selective_accuracy": None if selective is None or selective.value is None
            else round(selective.value, 4),
            "selective_interval": None if selective is None or selective.low is None
            else [round(selective.low, 4), round(selective.high, 4)],
            "refused": self.refused,
        }  # fmt: skip


def registered_curve(round_: Round, scope: ItemSet, rule_set: RuleSet) -> list[CurvePoint]:
    """Every registered parser with predictions for the held-out items, by training size."""
    held_ids = list(Item.objects.filter(item_sets=scope).values_list("id", flat=True))
    names = set(
        read_from(ParserPrediction.objects.filter(item_id__in=held_ids), round_.text_field)
        .values_list("parser", flat=True)
        .distinct()
    )
    parsers = [
        p
        for p in RegisteredParser.objects.defer("card", "trained_on").order_by(
            "trained_count", "name", "version"
        )
        if p.parser_name in names
    ]
    if not parsers:
        return []
    # one version over all of their predictions (and the gold, the sets, the eval tier)
    version = predictions_version(round_, [p.parser_name for p in parsers], scope)
    parts = (round_.pk, scope.pk, tuple(p.pk for p in parsers), version, rule_set.content_hash)
    key = "nsm:parser-curve:" + hashlib.sha256(repr(parts).encode()).hexdigest()
    found = cache.get(key)
    if found is None:
        gold = resolved_gold(round_, held_ids)
        labels = dict(Item.objects.filter(id__in=held_ids).values_list("id", "reference_label"))
        found = [_point(round_, scope, held_ids, gold, labels, p, rule_set) for p in parsers]
        cache.set(key, found, CACHE_SECONDS)
    return found


def _point(
    round_: Round,
    scope: ItemSet,
    held_ids: list[int],
    gold: dict[int, Any],
    labels: dict[int, str],
    parser: RegisteredParser,
    rule_set: RuleSet,
) -> CurvePoint:
    try:
        refuse_training_items(parser.parser_name, scope)
    except EvaluationRequestError as error:
        return CurvePoint(parser.spec, parser.parser_name, parser.trained_count, 0, None, None, str(error))
    predicted = newest_predictions(parser.parser_name, held_ids, round_.text_field)
    # as parser-vs-gold scores the label: only items with a reference label
    scored = [i for i in held_ids if i in gold and i in predicted and labels.get(i)]
    if not scored:
        return CurvePoint(parser.spec, parser.parser_name, parser.trained_count, 0, None, None)
    right = 0
    for i in scored:
        g, p = explication_codes(gold[i]), explication_codes(predicted[i])
        right += sum(a == b and a >= 0 for a, b in zip(g, p, strict=True))
    routings = {i: route(predicted[i], rule_set) for i in scored if is_legal(predicted[i])}
    claimed = [i for i, r in routings.items() if r.abstention_type is None]
    routed = sum(routings[i].label == labels[i] for i in claimed)
    return CurvePoint(
        parser.spec, parser.parser_name, parser.trained_count, len(scored),
        right / (len(scored) * len(SLOTS)), Proportion.of(routed, len(scored)),
        selective=Proportion.of(routed, len(claimed)),
    )  # fmt: skip


def curve_chart(points: list[CurvePoint]) -> dict[str, Any] | None:
    """Two lines on one pair of axes (y from 0 to 1): mean per-slot accuracy and routed accuracy
    against training size; None with fewer than one scored point."""
    scored = [p for p in points if p.routed is not None and p.routed.value is not None]
    if not scored:
        return None
    slots = line_chart([(p.trained, p.slot_accuracy) for p in scored], y_min=0.0, y_max=1.0)
    routed = line_chart([(p.trained, p.routed.value) for p in scored], y_min=0.0, y_max=1.0)
    claimed = [p for p in scored if p.selective is not None and p.selective.value is not None]
    selective = line_chart([(p.trained, p.selective.value) for p in claimed], y_min=0.0, y_max=1.0)
    # one x range for the three lines: the selective line is drawn only where it is defined
    selective = selective if len(claimed) == len(scored) else None
    return {"axes": slots, "slots": slots, "routed": routed, "selective": selective,
            "labels": [p.spec for p in scored]}  # fmt: skip
