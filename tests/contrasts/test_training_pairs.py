"""Issue 26: parser training can use pairs. A train job whose passes name ``pairs`` learns each
rewritten text of the newest frozen sets with the explication it is meant to have."""

import pytest

from adjudication.training import parse_passes, training_data
from contrasts.services import pair_set_freeze
from jobs.services import job_run
from nsmcore.training_data import TrainingDataError
from training.train import job_train_start

pytestmark = pytest.mark.django_db


def test_a_frozen_sets_rewrites_are_training_records_with_their_intended_slots(
    gold_round, pair_set, adjudicator
):
    open_set = training_data(round_=gold_round, passes="gold,pairs")
    assert not [r for r in open_set.records if r.source.startswith("pairs:")]  # an open set is not read

    pair_set_freeze(user=adjudicator, pair_set=pair_set)
    source = training_data(round_=gold_round, passes="gold,pairs")
    pairs = sorted(
        (r for r in source.records if r.source == "pairs:pilot-pairs@v1"), key=lambda r: r.construal
    )
    assert [(r.id, r.text) for r in pairs] == [
        ("t1-0", "I was happy when my sister won the chess final."),
        ("t3-0", "I was glad when it snowed on my birthday."),
        ("t3-0", "I was over the moon when it snowed on my birthday."),
    ]
    gold = {r.id: r.slots for r in source.records if r.source == "gold" and r.construal == 1}
    assert pairs[0].slots == gold["t1-0"] | {"agency": "someone-else"}  # the flip
    assert pairs[1].slots == gold["t3-0"]  # invariance: the gold itself
    assert pairs[2].slots == gold["t3-0"] | {"intensity": "very"}
    assert source.meta["passes"] == ["gold", "pairs"]


def test_a_train_job_learns_from_the_pairs_too(gold_round, pair_set, adjudicator, admin_user, tmp_path):
    pair_set_freeze(user=adjudicator, pair_set=pair_set)
    job = job_train_start(user=admin_user, round_=gold_round, method="classifier", passes="gold,pairs",
                          output_dir=str(tmp_path / "m"), enqueue=False)  # fmt: skip
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.summary["data"]["records"] == len(
        training_data(round_=gold_round, passes="gold,pairs").records
    )


def test_an_unknown_pass_is_still_named():
    with pytest.raises(TrainingDataError, match="pass 'pairz'"):
        parse_passes("gold,pairz")
    assert parse_passes("gold, pairs") == ["gold", "pairs"]
