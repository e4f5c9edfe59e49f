"""A round to mix controls into: "target", prefilled by the parser "lex" over eight items of its
own, for two annotators (fay and gus) who never saw the gold round's items; the gold round
("prefilled", tests/conftest.py) gives four resolved gold items as the controls."""

import pytest

from annotator.models import Assignment, Item, ParserPrediction, Round
from annotator.roles import ANNOTATOR
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from quality.services import controls_add
from tests.conftest import _user
from tests.factories import PRED


@pytest.fixture
def fay(db):
    return _user("fay", ANNOTATOR)


@pytest.fixture
def gus(db):
    return _user("gus", ANNOTATOR)


def own_items(prefix: str, n: int = 8) -> list[Item]:
    items = [
        Item.objects.create(
            source="quality",
            source_id=f"{prefix}{k}",
            text=f"I was glad about thing {k}.",
            masked_text=f"I was ... about thing {k}.",
            reference_label="joy",
        )
        for k in range(n)
    ]
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    return items


def make_round(name: str, annotators, *, mode: str = "prefilled", n: int = 8) -> Round:
    item_set = item_set_from_items(name=f"set-{name}", items=own_items(name, n))
    return round_create(
        name=name, item_set=item_set, annotators=annotators, mode=mode,
        prefill_parser="lex" if mode == "prefilled" else "", allow_prefill_overlap=True,
    )  # fmt: skip


@pytest.fixture
def target(gold_round, fay, gus) -> Round:
    return make_round("target", [fay, gus])


def queue(round_: Round, user) -> list[Assignment]:
    return list(Assignment.objects.filter(round=round_, annotator=user).order_by("position"))


def submit_all(round_: Round, user, *, diff: dict | None = None, controls: bool = True, real: bool = True):
    """Submit the user's assignments in the round (PRED, changed by ``diff``)."""
    for a in queue(round_, user):
        if (a.control and controls) or (not a.control and real):
            annotation_submit(assignment=a, user=user, values={**PRED, **(diff or {})}, base_version=0)


@pytest.fixture
def with_controls(target, fay, gus) -> Round:
    """The target round with every gold item as a control for both (rate 0.5: 4 of 8 each)."""
    controls_add(round_=target, control_rate=0.5)
    return target
