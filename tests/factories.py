"""Test data: a small item corpus and a parser prediction, as plain helpers."""

import json

from annotator.imports import items_import
from annotator.models import Item
from tests.explications import PRED  # noqa: F401  (re-exported for the app tests)

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


def login_request():
    """The request a login form sends: django-axes (annotator.login_limits) counts failures per
    address, so ``authenticate`` needs one (the login page always passes it)."""
    from django.test import RequestFactory

    return RequestFactory().post("/accounts/login/")
