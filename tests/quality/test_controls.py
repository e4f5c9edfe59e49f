"""Control items: mixed into each annotator's queue at the round's rate, from other rounds'
resolved gold, spread evenly, never an item the annotator ever had, prefilled like the others."""

import pytest

from adjudication.models import GoldItem
from annotator.models import Assignment, ParserPrediction
from annotator.services import annotation_submit
from quality.models import QualitySettings
from quality.services import QualityError, controls_add, controls_wanted, spread_slots
from tests.factories import PRED
from tests.quality.conftest import make_round, queue


def test_controls_wanted_is_the_rate_of_the_queue_rounded_and_at_least_one():
    assert controls_wanted(0.05, 100) == 5
    assert controls_wanted(0.05, 4) == 1
    assert controls_wanted(0.25, 10) == 3  # 2.5 rounds up
    assert controls_wanted(0, 100) == 0
    assert controls_wanted(0.1, 0) == 0


def test_spread_slots_are_even_and_never_first_unless_the_queue_is_empty():
    assert spread_slots(8, 2) == [3, 6]
    assert spread_slots(4, 1) == [2]
    assert spread_slots(0, 3) == [0, 1, 2]
    assert spread_slots(1, 1) == [1]


def test_controls_are_gold_items_outside_the_set_spread_through_each_queue(target, fay, gus, gold_round):
    added = controls_add(round_=target, control_rate=0.25)
    assert added.added == {"fay": 2, "gus": 2} and added.short == {} and added.candidates == 4
    gold_items = set(GoldItem.objects.filter(round=gold_round).values_list("item_id", flat=True))
    members = set(target.item_set.members.values_list("item_id", flat=True))
    for user in (fay, gus):
        mine = queue(target, user)
        assert [a.position for a in mine] == list(range(10))  # contiguous, shifted to make room
        assert [a.control for a in mine] == [
            False,
            False,
            False,
            True,
            False,
            False,
            True,
            False,
            False,
            False,
        ]
        controls = {a.item_id for a in mine if a.control}
        assert controls <= gold_items and not controls & members
        assert all(a.status == "pending" for a in mine)
    # the least used first: the two annotators got different items
    assert {a.item_id for a in queue(target, fay) if a.control}.isdisjoint(
        {a.item_id for a in queue(target, gus) if a.control}
    )
    assert QualitySettings.objects.get(round=target).control_rate == 0.25


def test_adding_again_adds_only_what_is_missing(target):
    controls_add(round_=target, control_rate=0.25)
    again = controls_add(round_=target)
    assert again.total == 0
    assert Assignment.objects.filter(round=target, control=True).count() == 4
    more = controls_add(round_=target, control_rate=0.5)
    assert more.added == {"fay": 2, "gus": 2}
    assert Assignment.objects.filter(round=target, control=True).count() == 8


def test_controls_go_after_the_done_work_into_what_is_left(target, fay):
    from annotator.services import annotation_submit

    first = queue(target, fay)[:3]
    for a in first:
        annotation_submit(assignment=a, user=fay, values=PRED, base_version=0)
    controls_add(round_=target, control_rate=0.125)  # one each
    mine = queue(target, fay)
    assert [a.position for a in mine] == list(range(9))
    assert [a.pk for a in mine[:3]] == [a.pk for a in first]  # done work keeps its places
    # five pending items left: the control goes in the middle of them
    assert [a.control for a in mine[3:]] == [False, False, False, True, False, False]


def test_never_an_item_the_annotator_ever_had(gold_round, annotator, fay):
    """alice annotated every gold item in the gold round: she gets none, and is named short."""
    round_ = make_round("mixed", [annotator, fay])
    added = controls_add(round_=round_, control_rate=0.125)
    assert added.added == {"fay": 1} and added.short == {"alice": 1}
    assert not Assignment.objects.filter(round=round_, annotator=annotator, control=True).exists()
    # the summary says why, not "too few eligible gold items for alice 1" (the walkthrough's puzzle)
    assert added.summary() == (
        "1 control items added (fay 1); alice 1 short: of the 4 gold items that could be controls, no more "
        "are left that they have not annotated already"
    )


def test_a_prefilled_round_takes_only_items_its_parser_predicted_in_its_field(gold_round, fay, gus):
    round_ = make_round("other-parser", [fay, gus])
    round_.prefill_parser = "other"
    round_.save()
    with pytest.raises(QualityError) as refused:
        controls_add(round_=round_, control_rate=0.25)
    assert refused.value.field == "control_source" and "other" in str(refused.value)
    assert not Assignment.objects.filter(round=round_, control=True).exists()
    assert not QualitySettings.objects.filter(round=round_).exists()  # nothing written, settings neither
    golds = list(GoldItem.objects.filter(round=gold_round).order_by("item_id"))
    # read from the generated text: a masked round may not show its prefill
    ParserPrediction.objects.create(
        item=golds[0].item, parser="other", explication=PRED, legal=True, text_field="text"
    )
    ParserPrediction.objects.create(
        item=golds[1].item, parser="other", explication=PRED, legal=True, text_field="masked_text"
    )
    added = controls_add(round_=round_, control_rate=0.25)
    assert added.candidates == 1
    assert set(Assignment.objects.filter(round=round_, control=True).values_list("item_id", flat=True)) == {
        golds[1].item_id
    }


def test_a_blind_round_takes_any_resolved_gold(gold_round, fay, gus):
    round_ = make_round("blind-target", [fay, gus], mode="blind")
    assert controls_add(round_=round_, control_rate=0.125).candidates == 4


def test_the_source_round_limits_the_candidates(target, gold_round, fay, gus):
    other = make_round("no-gold", [fay, gus])
    with pytest.raises(QualityError, match="no-gold"):
        controls_add(round_=target, control_rate=0.25, control_source=other)
    assert controls_add(round_=target, control_rate=0.25, control_source=gold_round).total == 4


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"control_rate": 0}, "control_rate"),
        ({"control_rate": 0.6}, "control_rate"),
        ({"control_rate": float("nan")}, "control_rate"),
        ({"control_rate": True}, "control_rate"),
    ],
)
def test_a_bad_rate_is_refused_and_nothing_written(target, changes, field):
    with pytest.raises(QualityError) as refused:
        controls_add(round_=target, **changes)
    assert refused.value.field == field
    assert not Assignment.objects.filter(round=target, control=True).exists()
    assert not QualitySettings.objects.filter(round=target).exists()


def test_the_round_itself_is_not_a_source(target):
    with pytest.raises(QualityError) as refused:
        controls_add(round_=target, control_rate=0.25, control_source=target)
    assert refused.value.field == "control_source"


def test_no_member_of_the_rounds_item_set_is_a_control(gold_round, fay, gus):
    """One gold item is in the round's own set, given to fay only: gus may not get it as a control."""
    from annotator.roles import ANNOTATOR
    from annotator.sampling import item_set_from_items
    from annotator.services import round_create
    from tests.conftest import _user
    from tests.quality.conftest import own_items

    hal = _user("hal", ANNOTATOR)
    member = GoldItem.objects.filter(round=gold_round).order_by("item_id").first().item
    item_set = item_set_from_items(name="set-member", items=[member, *own_items("member", 5)])
    round_ = round_create(
        name="member", item_set=item_set, annotators=[fay, gus, hal], mode="prefilled", prefill_parser="lex",
        annotators_per_item=1,
    )  # fmt: skip
    added = controls_add(round_=round_, control_rate=0.5)
    assert added.candidates == 3
    assert not Assignment.objects.filter(round=round_, control=True, item=member).exists()


def test_a_masked_round_takes_only_items_with_a_masked_text(target, gold_round):
    first = GoldItem.objects.filter(round=gold_round).order_by("item_id").first().item
    first.masked_text = ""
    first.save()
    assert controls_add(round_=target, control_rate=0.5).candidates == 3
    assert not Assignment.objects.filter(round=target, control=True, item=first).exists()


def test_round_completed_waits_for_the_controls_and_counts_only_the_rounds_own(
    with_controls, fay, gus, admin_user, monkeypatch, django_capture_on_commit_callbacks
):
    """Controls are work the annotators must finish, but no figure of the round: the webhook's
    count of assignments leaves them out."""
    from webhooks import services as hooks
    from webhooks.models import Delivery

    monkeypatch.setattr(hooks, "delivery_enqueue", lambda pk, attempt: None)  # no worker here
    hooks.webhook_create(user=admin_user, url="http://127.0.0.1:9/hook", events=["round.completed"])
    controls = Assignment.objects.filter(round=with_controls, control=True).count()
    assert controls == 8
    for user in (fay, gus):
        for a in queue(with_controls, user):
            if not a.control:
                with django_capture_on_commit_callbacks(execute=True):  # each submit its commit
                    annotation_submit(assignment=a, user=user, values=PRED, base_version=0)
    assert not Delivery.objects.exists()  # the controls are still to do
    for user in (fay, gus):
        for a in queue(with_controls, user):
            if a.control:
                with django_capture_on_commit_callbacks(execute=True):
                    annotation_submit(assignment=a, user=user, values=PRED, base_version=0)
    delivery = Delivery.objects.get(event="round.completed")
    assert delivery.payload["assignments"] == 16  # 8 items x 2 annotators
