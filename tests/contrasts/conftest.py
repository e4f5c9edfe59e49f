"""Minimal pairs' tests: three pairs over the gold round's items (one of them an invariance pair),
and a tiny classifier parser trained and registered in the test."""

from __future__ import annotations

import pytest

from contrasts.models import PairSet
from contrasts.services import pair_add, pair_set_create
from nsmcore.schema import Explication


def by_source(round_, source_id: str):
    return round_.item_set.items.get(source_id=source_id)


# The gold round's items (tests/factories.py) and their gold (tests/conftest.py gold_round):
# t1-0 "I was proud when I won the chess final." pride, gold PRED (agency=i): routes to pride
# t2-0 the stolen bike, anger, gold agency=someone-else: routes to joy
# t3-0 "I was happy when it snowed on my birthday." joy, gold PRED: routes to pride
# The rewrites are this file's own.
FLIP = {
    "item": "t1-0",
    "text": "I was happy when my sister won the chess final.",
    "targets": {"agency": "someone-else"},
    "expected": "joy",
    "family": "F-agency",
}
INVARIANT = {
    "item": "t3-0",
    "text": "I was glad when it snowed on my birthday.",
    "invariance": True,
}
INTENSITY = {
    "item": "t3-0",
    "text": "I was over the moon when it snowed on my birthday.",
    "targets": {"intensity": "very"},
    "expected": "pride",
    "family": "F-intensity",
}


@pytest.fixture
def pair_set(gold_round, adjudicator) -> PairSet:
    """An open set with three pairs: an agency flip, an invariance pair, an intensity flip."""
    made = pair_set_create(user=adjudicator, name="pilot-pairs", note="three to start")
    for values in (FLIP, INVARIANT, INTENSITY):
        pair_add(user=adjudicator, pair_set=made, **values)
    return made


def tiny_examples() -> list[tuple[str, dict[str, str]]]:
    """Texts that teach others_know and body from a cue, written for these tests."""
    deeds = [
        "I broke the neighbour's window with a ball",
        "I lost the keys to the office",
        "I forgot to feed my sister's cat",
        "I scratched my father's car",
    ]
    out = []
    for deed in deeds:
        for tail, others, body in (
            (" and the whole street saw it", "can-know", "no"),
            (" and nobody found out", "none", "no"),
            (" and my face went red as everyone watched", "can-know", "yes"),
            (" and my hands shook when I was alone", "none", "yes"),
        ):
            slots = Explication(
                trigger="someone-did-something", agency="i", evaluation="feel-bad", eval_target="self",
                others_know=others, body=body,
            ).slots()  # fmt: skip
            out.append((deed + tail, slots))
    return out


@pytest.fixture
def tiny_parser(tmp_path, admin_user):
    """A classifier parser trained here in a second and registered as tiny@1."""
    from nsmcore.parsers.classifier_training import train_classifier
    from registry.services import parser_register

    folder = tmp_path / "tiny"
    train_classifier(tiny_examples(), seed=0).save(folder)
    return parser_register(
        name="tiny", backend="classifier", folder=folder, card={}, trained_on=[], user=admin_user
    )
