"""A small team whose every figure is worked out by hand in the tests.

Eight items: t1-0..t4-0 in the prefilled round "P" (parser "lex" predicts PRED for every item;
alice and bob annotate all four), t1-1..t4-1 in the blind round "B" (alice alone). Gold of P:
t1-0 and t2-0 unanimous, t3-0 intensity by hand (carol: "the text says very"), t4-0 agency by
convention C1 (i over someone-else) and intensity by hand ("a plain reading"). A silver pass "S"
over P's items, where alice's answers (all different) must count nowhere.

    item   alice (P)                        bob (P)            gold
    t1-0   PRED                             PRED               PRED
    t2-0   agency=someone-else              agency=s-e         agency=someone-else
    t3-0   PRED                             intensity=very     intensity=very (carol)
    t4-0   agency=s-e, intensity=very       PRED               agency=i (C1), intensity=plain

    alice (B, blind): t1-1 PRED; t2-1 evaluation=feel-bad; t3-1 evaluation=feel-bad,
    agency=someone-else; t4-1 trigger=something-happened.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adjudication.gold.services import (
    convention_apply,
    convention_propose,
    convention_vote,
    gold_resolve,
    gold_sync,
)
from adjudication.models import GoldItem
from annotator.models import Annotation, AnnotationRevision, Assignment, ParserPrediction, Round
from annotator.sampling import item_set_from_items
from annotator.services import annotation_submit, round_create
from tests.explications import PRED
from tests.factories import make_items

RULE = "The writer's own doing keeps agency=i."

ALICE_P = [{}, {"agency": "someone-else"}, {}, {"agency": "someone-else", "intensity": "very"}]
BOB_P = [{}, {"agency": "someone-else"}, {"intensity": "very"}, {}]
ALICE_B = [
    {},
    {"evaluation": "feel-bad"},
    {"evaluation": "feel-bad", "agency": "someone-else"},
    {"trigger": "something-happened"},
]
ALICE_TIMES_P = [10_000, 20_000, 30_000, 40_000]
ALICE_TIMES_B = [50_000, 60_000, 70_000, 0]  # the last: no time recorded


def _submit(round_: Round, user, diffs: list[dict], times: list[int] | None = None) -> list[Assignment]:
    mine = list(Assignment.objects.filter(round=round_, annotator=user).order_by("item_id"))
    for k, a in enumerate(mine):
        annotation_submit(
            assignment=a, user=user, values={**PRED, **diffs[k]}, base_version=0,
            time_spent_ms=times[k] if times else 0,
        )  # fmt: skip
    return mine


def _on_day(assignments: list[Assignment], day: datetime) -> None:
    AnnotationRevision.objects.filter(annotation__assignment__in=assignments).update(created_at=day)


@pytest.fixture
def team(db, annotator, other_annotator, adjudicator, other_adjudicator):
    items = make_items(n_copies=2)
    first, second = items[:4], items[4:]  # t1-0..t4-0, then t1-1..t4-1
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    p = round_create(
        name="P", item_set=item_set_from_items(name="set-P", items=first),
        annotators=[annotator, other_annotator], mode="prefilled", prefill_parser="lex",
    )  # fmt: skip
    b = round_create(
        name="B", item_set=item_set_from_items(name="set-B", items=second),
        annotators=[annotator], annotators_per_item=1, mode="blind",
    )  # fmt: skip
    silver_bot = type(annotator).objects.create_user("silverbot")
    s = round_create(
        name="S", item_set=item_set_from_items(name="set-S", items=first),
        annotators=[annotator, silver_bot], mode="blind", pass_kind="silver", allow_prefill_overlap=True,
    )  # fmt: skip
    alice_p = _submit(p, annotator, ALICE_P, ALICE_TIMES_P)
    _submit(p, other_annotator, BOB_P)
    alice_b = _submit(b, annotator, ALICE_B, ALICE_TIMES_B)
    everything_else = {"experiencer": "people", "body": "yes", "knowledge": "know", "want": "not-want"}
    _submit(s, annotator, [everything_else] * 4)
    _submit(s, silver_bot, [everything_else] * 4)
    # days of first submission: two of P on 2 March, the rest on 4 March (3 March: none)
    _on_day(alice_p[:2], datetime(2026, 3, 2, 10, tzinfo=UTC))
    _on_day(alice_p[2:] + alice_b, datetime(2026, 3, 4, 10, tzinfo=UTC))

    gold_sync(p)
    golds = {g.item.source_id: g for g in GoldItem.objects.filter(round=p).select_related("item")}
    gold_resolve(user=adjudicator, gold=golds["t3-0"], values={"intensity": "very"}, why="the text says very")
    convention = convention_propose(
        user=adjudicator, round_=p, slot="agency", value_a="i", value_b="someone-else", chosen="i", rule=RULE
    )
    for voter in (adjudicator, other_adjudicator):
        convention = convention_vote(user=voter, convention=convention, approve=True)
    assert convention_apply(user=adjudicator, convention=convention) == 1
    gold_resolve(
        user=adjudicator, gold=GoldItem.objects.get(pk=golds["t4-0"].pk), values={"intensity": "plain"},
        why="a plain reading",
    )  # fmt: skip
    assert GoldItem.objects.filter(round=p, status="resolved").count() == 4
    assert Annotation.objects.count() == 4 + 4 + 4 + 8
    return {"P": p, "B": b, "S": s, "convention": convention, "alice_p": alice_p, "alice_b": alice_b}
