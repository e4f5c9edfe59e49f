"""Rule set documents and gold records the rule revision tests share."""

from __future__ import annotations

import copy
import json
from importlib import resources

from adjudication.gold.services import _routings
from adjudication.models import GoldConstrual, GoldItem
from annotator.models import Item, ItemSet, Round
from annotator.sampling import item_set_from_items
from rules.rulesets import active_rule_set
from tests.explications import PRED

# Routes to surprise under v1 (knowledge not-know, realization happened, no rule above it holds)
# and to no-emotion once that rule comes first: the label a passing revision changes.
NEUTRAL_SURPRISE = {**PRED, "evaluation": "neither", "knowledge": "not-know", "realization": "happened"}


def v1() -> dict:
    text = resources.files("nsmcore.data").joinpath("rulesets", "v1.json").read_text("utf-8")
    return json.loads(text)


def moved(emotion: str, to: int) -> dict:
    """v1 with ``emotion``'s rule moved to position ``to``."""
    doc = copy.deepcopy(v1())
    rules = doc["rules"]
    rule = next(r for r in rules if r["emotion"] == emotion)
    rules.remove(rule)
    rules.insert(to, rule)
    return doc


def swapped(a: str, b: str) -> dict:
    """v1 with the rules of ``a`` and ``b`` trading places (guilt and shame: fails the suite)."""
    doc = copy.deepcopy(v1())
    rules = doc["rules"]
    i = next(k for k, r in enumerate(rules) if r["emotion"] == a)
    j = next(k for k, r in enumerate(rules) if r["emotion"] == b)
    rules[i], rules[j] = rules[j], rules[i]
    return doc


def gold_items(items: list[Item], slots: list[dict], *, item_set_name: str = "P") -> Round:
    """A resolved gold record per item, routed under the active version, in a round over an item
    set named ``item_set_name`` (the pilot's default name)."""
    item_set = ItemSet.objects.filter(name=item_set_name).first() or item_set_from_items(
        name=item_set_name, items=items, tier=ItemSet.Tier.PILOT
    )
    round_ = Round.objects.create(name=f"gold of {item_set_name}", item_set=item_set)
    routings = _routings(slots, active_rule_set())
    for item, values, routing in zip(items, slots, routings, strict=True):
        gold = GoldItem.objects.create(item=item, round=round_, status=GoldItem.Status.RESOLVED)
        GoldConstrual.objects.create(gold=gold, index=1, slots=values, provenance={}, **routing)
    return round_
