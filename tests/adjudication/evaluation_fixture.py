"""A round written for the evaluation tests: six items with reference labels, two annotators'
passes, a parser's predictions and gold (one item kept with two construals).

    item  reference  alice                    bob          gold (construal 1)  parser lex
    e1    guilt      GUILT                    SHAME        GUILT               PRIDE (newest; v0 said GUILT)
    e2    shame      SHAME                    SHAME        SHAME               unreadable (illegal)
    e3    pride      PRIDE                    NO_RULE      PRIDE               PRIDE
    e4    anger      ANGER                    ANGER        ANGER               -
    e5    guilt      SHAME                    GUILT        GUILT (+ SHAME)     -
    e6    shame      GUILT + residue          GUILT        GUILT               -

SHAME fires shame and guilt (shame outranks guilt); NO_RULE is legal and fires nothing.
"""

from __future__ import annotations

import csv
import io
import json

from adjudication.gold.services import gold_resolve, gold_sync
from adjudication.models import GoldItem
from annotator.imports import items_import
from annotator.models import Assignment, Item, ParserPrediction, Round
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from tests.explications import PRED

GUILT = {
    "experiencer": "i", "trigger": "someone-did-something", "agency": "i", "realization": "none",
    "time_direction": "before-now", "want": "none", "evaluation": "feel-bad", "eval_target": "self",
    "knowledge": "none", "others_know": "none", "body": "no", "intensity": "plain",
}  # fmt: skip
SHAME = {**GUILT, "others_know": "can-know"}
PRIDE = dict(PRED)
ANGER = {**GUILT, "agency": "someone-else", "eval_target": "other"}
NO_RULE = {**GUILT, "agency": "someone-else"}

LABELS = {"e1": "guilt", "e2": "shame", "e3": "pride", "e4": "anger", "e5": "guilt", "e6": "shame"}
ALICE = {"e1": GUILT, "e2": SHAME, "e3": PRIDE, "e4": ANGER, "e5": SHAME,
         "e6": {**GUILT, "residue": "she felt it before anyone knew"}}  # fmt: skip
BOB = {"e1": SHAME, "e2": SHAME, "e3": NO_RULE, "e4": ANGER, "e5": GUILT, "e6": GUILT}
GOLD = {"e1": GUILT, "e2": SHAME, "e3": PRIDE, "e4": ANGER, "e5": GUILT, "e6": GUILT}
PARSER = {"e1": PRIDE, "e2": None, "e3": PRIDE}


def make_evaluation_round(alice, bob, adjudicator) -> Round:
    lines = [
        json.dumps({"text_id": sid, "emotion": label, "text": f"text {sid}", "masked_text": f"text {sid}"})
        for sid, label in LABELS.items()
    ]
    items_import(data="\n".join(lines), fmt="jsonl", source="eval-test")
    items = list(Item.objects.filter(source="eval-test").order_by("source_id"))
    item_set = item_set_from_items(name="eval-S6", items=items, tier="S")
    round_ = round_create(name="eval-round", item_set=item_set, annotators=[alice, bob])
    for user, values in ((alice, ALICE), (bob, BOB)):
        for a in Assignment.objects.filter(round=round_, annotator=user).select_related("item"):
            annotation_submit(assignment=a, user=user, values=values[a.item.source_id], base_version=0)
    by_id = {i.source_id: i for i in items}
    ParserPrediction.objects.create(item=by_id["e1"], parser="lex", parser_version="v0", explication=GUILT,
                                    legal=True)  # fmt: skip
    for sid, explication in PARSER.items():
        ParserPrediction.objects.create(
            item=by_id[sid],
            parser="lex",
            parser_version="v1",
            explication=explication,
            legal=explication is not None,
        )
    gold_sync(round_)
    golds = {g.item.source_id: g for g in GoldItem.objects.filter(round=round_).select_related("item")}
    gold_resolve(user=adjudicator, gold=golds["e1"], values={"others_know": "none"}, why="nobody knew")
    gold_resolve(user=adjudicator, gold=golds["e3"], values=_diff(PRIDE, NO_RULE), why="she won")
    gold_resolve(
        user=adjudicator,
        gold=golds["e5"],
        values={"others_know": "none"},
        second={"others_know": "can-know"},
        why="both readings hold",
    )
    assert GoldItem.objects.filter(round=round_, status="resolved").count() == 6
    return round_


def _diff(a: dict[str, str], b: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in a.items() if b.get(k) != v}


def evaluation_url(round_: Round, query: str = "") -> str:
    """The round's Evaluation page, with a query string when given."""
    return f"/adjudicate/rounds/{round_.pk}/evaluation/" + (f"?{query}" if query else "")


def evaluation_csv_url(round_: Round, table: str, query: str = "") -> str:
    """One table of the round's Evaluation page as CSV, for the page's query string."""
    return f"/adjudicate/rounds/{round_.pk}/evaluation/{table}.csv" + (f"?{query}" if query else "")


def csv_rows(response) -> list[dict[str, str]]:
    """The rows of a CSV download, keyed by its header."""
    return list(csv.DictReader(io.StringIO(response.content.decode())))
