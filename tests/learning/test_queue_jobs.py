"""The learning queue's jobs: computing the queue, retraining the parser on the round's gold (a
train job, a prefill job, then the queue from the new parser), a round that retrains by itself
every N gold items, and the simulation with the round's gold as the oracle."""

import pytest

from jobs.kinds import JobError
from jobs.models import Job
from jobs.services import job_run
from learning.auto import retrain_if_due
from learning.jobs import job_queue_start, job_retrain_start, job_simulate_start
from learning.models import QueueEntry, QueuePolicy
from learning.services import queue_policy_set

pytestmark = pytest.mark.django_db


def run(job: Job) -> Job:
    job_run(job.pk)
    job.refresh_from_db()
    return job


def test_the_queue_job_computes_the_queue_and_records_what_it_read(clf_round, admin_user):
    queue_policy_set(round_=clf_round, user=admin_user, order="informative", parser="clf")
    job = run(job_queue_start(user=admin_user, round_=clf_round, enqueue=False))
    assert job.status == "done", job.error
    assert job.summary["items"] == 4 and job.summary["parser"] == "clf 1"
    assert QueueEntry.objects.filter(policy__round=clf_round).count() == 4


def test_a_queue_job_needs_a_queue(clf_round, admin_user):
    with pytest.raises(JobError, match="has no learning queue"):
        job_queue_start(user=admin_user, round_=clf_round, enqueue=False)
    assert not Job.objects.exists()


def test_retraining_trains_prefills_and_ranks_with_the_new_parser(gold_round, admin_user, tmp_path):
    queue_policy_set(round_=gold_round, user=admin_user, order="informative", parser="lex")
    job = run(job_retrain_start(user=admin_user, round_=gold_round, enqueue=False))
    assert job.status == "done", job.error
    train, prefill = (
        Job.objects.get(pk=job.summary["train_job"]),
        Job.objects.get(pk=job.summary["prefill_job"]),
    )
    assert (train.kind, train.status, prefill.kind, prefill.status) == ("train", "done", "prefill", "done")
    policy = QueuePolicy.objects.get(round=gold_round)
    assert policy.parser == prefill.engine and policy.parser.startswith("classifier")
    assert policy.gold_at_retrain == 4
    entries = QueueEntry.objects.filter(policy=policy)
    assert entries.count() == 4 and all(entries.values_list("posteriors", flat=True))  # the classifier's


def test_retraining_without_gold_is_refused(clf_round, admin_user):
    queue_policy_set(round_=clf_round, user=admin_user, order="mixed")
    with pytest.raises(JobError, match="no resolved gold"):
        job_retrain_start(user=admin_user, round_=clf_round, enqueue=False)


def test_a_round_retrains_by_itself_every_n_gold_items(
    gold_round, admin_user, tmp_path, django_capture_on_commit_callbacks
):
    from adjudication.models import GoldItem

    policy = queue_policy_set(
        round_=gold_round, user=admin_user, order="mixed", parser="lex", retrain_every=2
    )
    QueuePolicy.objects.filter(pk=policy.pk).update(gold_at_retrain=3)  # one new gold item since
    assert retrain_if_due(gold_round.pk) is False
    assert not Job.objects.filter(kind="retrain").exists()
    QueuePolicy.objects.filter(pk=policy.pk).update(gold_at_retrain=2)  # two: due
    gold = GoldItem.objects.filter(round=gold_round).first()
    with django_capture_on_commit_callbacks(execute=True):
        gold.save()  # saved resolved again: the signal asks
    job = Job.objects.get(kind="retrain")
    assert job.params["trigger"] == "auto" and job.status == "done", job.error
    assert QueuePolicy.objects.get(pk=policy.pk).gold_at_retrain == 4


def test_the_simulation_runs_every_order_and_seed_on_the_rounds_gold(gold_round, admin_user):
    from annotator.models import Item

    Item.objects.filter(item_sets=gold_round.item_set).update(reference_label="pride")
    job = run(
        job_simulate_start(user=admin_user, round_=gold_round, enqueue=False, seeds=2, start=1, batch=1)
    )
    assert job.status == "done", job.error
    curves = job.summary["curves"]
    assert set(curves) == {"random", "informative", "mixed"}
    # 4 items: one held out, one to start, two more one at a time
    assert [row["labelled"] for row in curves["random"]] == [1, 2, 3]
    assert job.summary["seeds"] == 2 and job.summary["items"] == 4
    assert job.done == job.total == 6


def test_a_simulation_needs_enough_gold(gold_round, admin_user):
    from annotator.models import Item

    Item.objects.filter(item_sets=gold_round.item_set).update(reference_label="pride")
    with pytest.raises(JobError, match="4 resolved gold items"):
        job_simulate_start(user=admin_user, round_=gold_round, enqueue=False, start=20)
