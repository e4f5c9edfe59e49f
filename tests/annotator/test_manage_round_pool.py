"""Round services: the blind/prefilled overlap guard and the pool changes (add, remove) with
their balancing."""

from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotator.models import Assignment, ParserPrediction, Round
from annotator.round_selectors import prefill_overlap
from annotator.sampling import item_set_from_items
from annotator.services import (
    RoundError,
    RoundOverlap,
    annotation_submit,
    round_annotator_add,
    round_annotator_remove,
    round_create,
)
from tests.factories import PRED, make_items

pytestmark = pytest.mark.django_db


def _pending(round_: Round) -> Counter:
    return Counter(round_.assignments.filter(status="pending").values_list("annotator__username", flat=True))


def test_a_blind_round_over_items_its_annotators_saw_prefilled_is_refused_without_the_flag(
    prefilled_round, annotator, other_annotator, adjudicator
):
    item_set = prefilled_round.item_set
    assert prefill_overlap(item_set=item_set, annotators=[annotator, other_annotator, adjudicator]) == {
        "alice": 4,
        "bob": 4,
    }
    with pytest.raises(RoundOverlap) as refused:
        round_create(name="b", item_set=item_set, annotators=[annotator, other_annotator], mode="blind")
    assert refused.value.field == "confirm_overlap"
    assert refused.value.counts == {"alice": 4, "bob": 4}
    assert "alice 4, bob 4" in str(refused.value)
    assert not Round.objects.filter(name="b").exists()
    made = round_create(
        name="b",
        item_set=item_set,
        annotators=[annotator, other_annotator],
        mode="blind",
        allow_prefill_overlap=True,
    )
    assert made.assignments.count() == 8


def test_a_prefilled_round_or_a_blind_one_for_other_annotators_needs_no_flag(
    prefilled_round, annotator, adjudicator, other_adjudicator
):
    item_set = prefilled_round.item_set
    round_create(
        name="p2",
        item_set=item_set,
        annotators=[annotator],
        annotators_per_item=1,
        mode="prefilled",
        prefill_parser="lex",
    )
    blind = round_create(
        name="b", item_set=item_set, annotators=[adjudicator, other_adjudicator], mode="blind"
    )
    assert blind.assignments.count() == 8


def test_create_round_command_has_the_matching_flag(prefilled_round, capsys):
    with pytest.raises(CommandError, match=r"prefilled: alice 4, bob 4.*--allow-prefill-overlap"):
        call_command("create_round", "b", "--item-set", "set-p", "--annotators", "alice,bob")
    call_command(
        "create_round", "b", "--item-set", "set-p", "--annotators", "alice,bob", "--allow-prefill-overlap"
    )
    assert "b: 8 assignments" in capsys.readouterr().out


def _round(n_items: int, users, k: int = 2, mode: str = "blind") -> Round:
    items = make_items(n_copies=n_items // 4)
    return round_create(
        name="r",
        item_set=item_set_from_items(name="s", items=items),
        annotators=users,
        annotators_per_item=k,
        mode=mode,
    )


def test_removing_an_annotator_hands_their_pending_items_to_the_least_loaded_others_and_keeps_done_work(
    annotator, other_annotator, adjudicator
):
    round_ = _round(12, [annotator, other_annotator, adjudicator])  # 24 assignments, 8 each
    done = list(Assignment.objects.filter(round=round_, annotator=annotator).order_by("position")[:3])
    for a in done:
        annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    report = round_annotator_remove(round_=round_, annotator=annotator)
    assert report.moved == 5 and report.uncovered == 0
    assert not round_.pool.filter(pk=annotator.pk).exists()
    kept = Assignment.objects.filter(round=round_, annotator=annotator)
    assert set(kept.values_list("status", flat=True)) == {"done"} and kept.count() == 3
    # every item still has two annotators, nobody has an item twice (the constraint would raise)
    per_item = Counter(round_.assignments.values_list("item_id", flat=True))
    assert set(per_item.values()) == {2}
    # the k=2 rotation gave alice's items to bob or carol already: each goes to the other one
    assert sum(_pending(round_).values()) == 16 + 5
    assert abs(_pending(round_)["bob"] - _pending(round_)["carol"]) <= 5
    positions = list(
        Assignment.objects.filter(round=round_, annotator=other_annotator).values_list("position", flat=True)
    )
    assert len(positions) == len(set(positions))


def test_removing_leaves_an_item_short_when_nobody_else_can_take_it(annotator, other_annotator):
    round_ = _round(4, [annotator, other_annotator])  # both have every item
    report = round_annotator_remove(round_=round_, annotator=annotator)
    assert (report.moved, report.uncovered) == (0, 4)
    assert not Assignment.objects.filter(round=round_, annotator=annotator).exists()
    assert round_.assignments.count() == 4


def test_adding_an_annotator_takes_a_fair_share_of_pending_work_from_the_most_loaded(
    annotator, other_annotator, adjudicator
):
    round_ = _round(12, [annotator, other_annotator], k=1)  # 6 pending each
    for a in Assignment.objects.filter(round=round_, annotator=annotator).order_by("position")[:4]:
        annotation_submit(assignment=a, user=annotator, values=PRED, base_version=0)
    report = round_annotator_add(round_=round_, annotator=adjudicator)
    # 8 pending work left (alice 2, bob 6): a third of it, taken from bob first
    assert report.moved == 2
    assert _pending(round_) == {"alice": 2, "bob": 4, "carol": 2}
    assert round_.pool.filter(pk=adjudicator.pk).exists()
    assert round_.assignments.count() == 12
    with pytest.raises(RoundError, match="already in the pool"):
        round_annotator_add(round_=round_, annotator=adjudicator)


def test_adding_to_a_blind_round_never_hands_over_items_the_newcomer_saw_prefilled(
    annotator, other_annotator, adjudicator
):
    round_ = _round(8, [annotator, other_annotator], k=1)  # 4 pending each
    seen = list(round_.item_set.items.order_by("id")[:6])
    for item in seen:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    round_create(
        name="p",
        item_set=item_set_from_items(name="seen", items=seen),
        annotators=[adjudicator],
        annotators_per_item=1,
        mode="prefilled",
        prefill_parser="lex",
    )
    report = round_annotator_add(round_=round_, annotator=adjudicator)
    # a fair share would be 2 of the 8, but only two items are unseen by carol
    mine = Assignment.objects.filter(round=round_, annotator=adjudicator).values_list("item_id", flat=True)
    assert report.moved == 2 and not set(mine) & {i.pk for i in seen}


def test_removing_from_a_blind_round_avoids_recipients_who_saw_the_item_prefilled(
    annotator, other_annotator, adjudicator
):
    round_ = _round(4, [annotator, other_annotator], k=1)
    pending_of_alice = list(
        Assignment.objects.filter(round=round_, annotator=annotator).values_list("item_id", flat=True)
    )
    round_.pool.add(adjudicator)  # an empty-handed pool member
    first = round_.item_set.items.get(pk=pending_of_alice[0])
    ParserPrediction.objects.create(item=first, parser="lex", explication=PRED, legal=True)
    round_create(
        name="p",
        item_set=item_set_from_items(name="one", items=[first]),
        annotators=[adjudicator, other_annotator],
        mode="prefilled",
        prefill_parser="lex",
    )
    report = round_annotator_remove(round_=round_, annotator=annotator)
    assert (report.moved, report.uncovered) == (1, 1)
    assert not Assignment.objects.filter(round=round_, item=first).exists()
    carol = Assignment.objects.get(round=round_, annotator=adjudicator)
    assert carol.item_id == pending_of_alice[1]


def test_removing_someone_not_in_the_pool_is_refused(annotator, other_annotator, adjudicator):
    round_ = _round(4, [annotator, other_annotator])
    with pytest.raises(RoundError, match="carol is not in the pool"):
        round_annotator_remove(round_=round_, annotator=adjudicator)


def test_a_pool_naming_someone_twice_is_refused(items, annotator, other_annotator):
    item_set = item_set_from_items(name="s", items=items)
    with pytest.raises(RoundError, match="named twice") as refused:
        round_create(name="r", item_set=item_set, annotators=[annotator, annotator, other_annotator])
    assert refused.value.field == "annotators"
    assert not Round.objects.exists() and not Assignment.objects.exists()


def test_adding_an_annotator_who_gets_no_work_says_why(annotator, other_annotator, adjudicator):
    from tests.conftest import _user

    items = make_items()
    # too little pending work for a share: 1 pending among a pool of 3
    round_ = round_create(
        name="r", item_set=item_set_from_items(name="s", items=items),
        annotators=[annotator, other_annotator], annotators_per_item=1,
    )  # fmt: skip
    Assignment.objects.filter(round=round_).exclude(pk=round_.assignments.first().pk).update(status="skipped")
    report = round_annotator_add(round_=round_, annotator=adjudicator)
    assert report.moved == 0
    assert report.summary() == (
        "0 pending assignments moved: 1 pending assignment among a pool of 3 makes less than one each"
    )
    # every pending item of a blind round was seen prefilled by the newcomer
    blind = round_create(
        name="b", item_set=item_set_from_items(name="s2", items=items),
        annotators=[annotator, other_annotator], annotators_per_item=1,
    )  # fmt: skip
    for item in items:
        ParserPrediction.objects.create(item=item, parser="lex", explication=PRED, legal=True)
    frank = _user("frank", "annotator")
    round_create(
        name="p", item_set=item_set_from_items(name="seen-all", items=items), annotators=[frank],
        annotators_per_item=1, mode="prefilled", prefill_parser="lex",
    )  # fmt: skip
    report = round_annotator_add(round_=blind, annotator=frank)
    assert report.moved == 0
    assert report.summary() == "0 pending assignments moved: frank saw every pending item prefilled"
    assert not Assignment.objects.filter(round=blind, annotator=frank).exists()


def test_a_prefilled_round_over_items_its_annotators_have_pending_blind_is_refused_without_the_flag(
    blind_round, annotator, other_annotator, client, admin_user
):
    """The blind control arm is spoiled the other way too: a prefilled round showing the parser's
    explication of items an annotator has still to do blind (issue 25: accepted without a word)."""
    item_set = blind_round.item_set
    annotation_submit(
        assignment=blind_round.assignments.filter(annotator=annotator).first(),
        user=annotator, values=PRED, base_version=0,
    )  # fmt: skip
    pool = [annotator, other_annotator]
    with pytest.raises(RoundOverlap) as refused:
        round_create(name="p", item_set=item_set, annotators=pool, mode="prefilled", prefill_parser="lex")
    assert refused.value.counts == {"alice": 3, "bob": 4}  # what each has still to do blind
    assert "still to annotate blind" in str(refused.value) and "alice 3, bob 4" in str(refused.value)
    assert not Round.objects.filter(name="p").exists()

    # the API and the command ask the same confirmation
    client.force_login(admin_user)
    body = {"name": "p", "item_set": item_set.pk, "annotators": ["alice", "bob"], "mode": "prefilled",
            "prefill_parser": "lex"}  # fmt: skip
    answer = client.post("/api/rounds/", body, content_type="application/json")
    assert answer.status_code == 409 and answer.json()["overlap"] == {"alice": 3, "bob": 4}
    with pytest.raises(CommandError, match="still to annotate blind"):
        call_command("create_round", "p", "--item-set", item_set.name, "--annotators", "alice,bob",
                     "--mode", "prefilled", "--prefill-parser", "lex")  # fmt: skip
    made = round_create(
        name="p", item_set=item_set, annotators=pool, mode="prefilled", prefill_parser="lex",
        allow_prefill_overlap=True,
    )  # fmt: skip
    assert made.assignments.count() == 8


def test_the_new_round_page_asks_to_confirm_a_prefilled_round_over_pending_blind_items(
    blind_round, client, admin_user, annotator, other_annotator
):
    client.force_login(admin_user)
    form = {
        "name": "p", "item_set": blind_round.item_set.pk, "annotators": [annotator.pk, other_annotator.pk],
        "mode": "prefilled", "prefill_parser": "lex", "text_field": "masked_text", "annotators_per_item": 2,
        "pass_kind": "human",
    }  # fmt: skip
    page = client.post("/manage/rounds/new/", form)
    body = page.content.decode()
    assert page.status_code == 400, body
    assert 'id="overlap-warning"' in body and "still have items of this set to do blind" in body
    assert not Round.objects.filter(name="p").exists()
    assert client.post("/manage/rounds/new/", {**form, "confirm_overlap": "on"}).status_code == 302
    assert Round.objects.get(name="p").mode == "prefilled"
