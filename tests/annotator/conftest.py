import json

import pytest

from annotator.imports import items_import
from annotator.models import Item, ParserPrediction, Round
from annotator.sampling import item_set_from_items
from annotator.services import round_create

PRED = {
    "experiencer": "i",
    "trigger": "someone-did-something",
    "agency": "i",
    "realization": "happened",
    "time_direction": "before-now",
    "want": "want",
    "evaluation": "feel-good",
    "eval_target": "self",
    "knowledge": "none",
    "others_know": "none",
    "body": "no",
    "intensity": "plain",
}
TEXTS = [
    ("t1", "pride", "I was proud when I won the chess final.", "I was ... when I won the chess final."),
    (
        "t2",
        "anger",
        "I was angry when my bike was stolen by a neighbour.",
        "I was ... when my bike was stolen.",
    ),
    ("t3", "joy", "I was happy when it snowed on my birthday.", "I was ... when it snowed on my birthday."),
    ("t4", "fear", "I was scared of the exam next week.", "I was ... of the exam next week."),
]


def make_items(n_copies: int = 1) -> list[Item]:
    lines = []
    for c in range(n_copies):
        for sid, emotion, text, masked in TEXTS:
            row = {"text_id": f"{sid}-{c}", "emotion": emotion, "text": text, "masked_text": masked}
            lines.append(json.dumps(row))
    items_import(data="\n".join(lines), fmt="jsonl", source="test")
    return list(Item.objects.filter(source="test").order_by("id"))


@pytest.fixture
def items(db) -> list[Item]:
    return make_items()


@pytest.fixture
def prefilled_round(items, annotator, other_annotator) -> Round:
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    item_set = item_set_from_items(name="set-p", items=items)
    return round_create(
        name="prefilled",
        item_set=item_set,
        annotators=[annotator, other_annotator],
        mode="prefilled",
        prefill_parser="lex",
    )


@pytest.fixture
def blind_round(items, annotator, other_annotator) -> Round:
    for item in items:
        ParserPrediction.objects.get_or_create(
            item=item, parser="lex", defaults={"explication": PRED, "legal": True}
        )
    item_set = item_set_from_items(name="set-b", items=items)
    return round_create(
        name="blind", item_set=item_set, annotators=[annotator, other_annotator], mode="blind"
    )
