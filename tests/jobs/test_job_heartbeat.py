"""Liveness of running jobs: the heartbeat a run writes from its own thread, what stalled means,
the sweeper that puts a job whose worker is gone back in the queue (once, however many sweepers
look), a run that lost its job stopping without touching it, and the queue each kind goes to."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from celery import current_app
from django.urls import reverse
from django.utils import timezone

from annotator.models import ParserPrediction
from annotator.sampling import item_set_from_items
from jobs.heartbeat import heartbeat_lost
from jobs.models import Job
from jobs.services import job_enqueue, job_run, job_take_stalled, jobs_resume_stalled
from predictions.parsers import parser_build
from predictions.prefill import job_prefill_start
from server.supervisor import worker_command
from tests.app.test_env import manage
from tests.factories import make_items


@pytest.fixture
def item_set(db):
    return item_set_from_items(name="twelve", items=make_items(n_copies=3))


@pytest.fixture
def sent(monkeypatch) -> list[tuple[tuple, str]]:
    """What job_enqueue hands the broker: (task arguments, queue) per message."""
    messages: list[tuple[tuple, str]] = []
    task = current_app.tasks["jobs.run_job"]

    class Sent:
        id = "task-1"

    def apply_async(args, queue):
        messages.append((tuple(args), queue))
        return Sent()

    monkeypatch.setattr(task, "apply_async", apply_async)
    return messages


def running(job: Job, *, silent_for: float, runner: str = "gone-host/1/abc") -> Job:
    """The job as a run left it: running, last heartbeat ``silent_for`` seconds ago."""
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING, runner=runner, heartbeat_at=timezone.now() - timedelta(seconds=silent_for)
    )
    job.refresh_from_db()
    return job


def test_a_running_job_is_stalled_only_once_its_heartbeat_is_older_than_the_limit(
    item_set, admin_user, settings
):
    settings.NSM_JOB_STALL_SECONDS = 15
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    assert not running(job, silent_for=14).stalled
    assert running(job, silent_for=16).stalled
    assert running(job, silent_for=16).can_resume
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    job.refresh_from_db()
    assert not job.stalled, "only a running job can be stalled"


def test_the_job_page_says_a_stalled_job_has_lost_its_worker(item_set, admin_user, client, settings):
    settings.NSM_JOB_STALL_SECONDS = 15
    job = running(job_prefill_start(user=admin_user, item_set=item_set, enqueue=False), silent_for=40)
    client.force_login(admin_user)
    page = client.get(reverse("job_status", args=[job.pk])).content.decode()
    assert re.search(r'id="job-stalled">no heartbeat from its worker for 4\d s', page), page
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
    assert 'id="job-stalled"' not in client.get(reverse("job_status", args=[job.pk])).content.decode()


def test_the_jobs_api_gives_the_heartbeat_the_stall_and_the_queue(
    one_job_of_each_kind, admin_user, client, settings
):
    settings.NSM_JOB_STALL_SECONDS = 15
    settings.NSM_VERIFY_QUEUE = "gpu"
    prefill, verify, _ = one_job_of_each_kind
    stalled = running(prefill, silent_for=40)
    client.force_login(admin_user)
    body = client.get(reverse("api_job", args=[stalled.pk])).json()
    assert body["stalled"] is True and body["queue"] == "celery"
    assert body["heartbeat_at"] == stalled.heartbeat_at.isoformat().replace("+00:00", "Z")
    live = running(verify, silent_for=1)
    body = client.get(reverse("api_job", args=[live.pk])).json()
    assert body["stalled"] is False and body["queue"] == "gpu"


def test_two_sweepers_that_both_saw_a_stalled_job_requeue_it_once(item_set, admin_user, settings):
    settings.NSM_JOB_STALL_SECONDS = 15
    job = running(job_prefill_start(user=admin_user, item_set=item_set, enqueue=False), silent_for=60)
    cutoff = timezone.now() - timedelta(seconds=15)
    # each sweeper listed the job before either took it: only the first conditional update wins
    assert [job_take_stalled(job.pk, cutoff), job_take_stalled(job.pk, cutoff)] == [True, False]
    job.refresh_from_db()
    assert (job.status, job.runner) == ("queued", "")


def test_the_sweeper_sends_a_stalled_job_once_and_leaves_live_ones_alone(
    item_set, admin_user, settings, sent
):
    settings.NSM_JOB_STALL_SECONDS = 15
    stalled = running(job_prefill_start(user=admin_user, item_set=item_set, enqueue=False), silent_for=60)
    other = item_set_from_items(name="other", items=make_items(n_copies=1))
    live = running(job_prefill_start(user=admin_user, item_set=other, enqueue=False), silent_for=2)
    assert jobs_resume_stalled() == [stalled.pk]
    assert jobs_resume_stalled() == [], "a second sweeper finds nothing left to take"
    assert sent == [((stalled.pk,), "celery")]
    stalled.refresh_from_db()
    live.refresh_from_db()
    assert (stalled.status, stalled.task_id) == ("queued", "task-1")
    assert (live.status, live.runner) == ("running", "gone-host/1/abc")


def test_a_stalled_job_whose_cancel_was_asked_is_cancelled_not_resumed(item_set, admin_user, settings, sent):
    settings.NSM_JOB_STALL_SECONDS = 15
    job = running(job_prefill_start(user=admin_user, item_set=item_set, enqueue=False), silent_for=60)
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    assert jobs_resume_stalled() == []
    job.refresh_from_db()
    assert job.status == "cancelled" and job.finished_at is not None
    assert sent == []


def test_a_job_requeued_by_the_sweeper_goes_on_without_redoing_work(item_set, admin_user, settings):
    settings.NSM_JOB_STALL_SECONDS = 15
    settings.NSM_JOB_BATCH_SIZE = 5
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    parser = parser_build(backend="lexical")
    first = [m.item_id for m in item_set.members.order_by("position")[:5]]
    for item_id, result in zip(first, parser.parse(["x"] * 5), strict=True):  # the dead run's batch
        ParserPrediction.objects.create(
            item_id=item_id, parser=parser.name, parser_version=parser.version, legal=result.legal,
            explication=result.explication.as_dict() if result.explication else None, job=job,
            text_field=job.typed_params.text_field,
        )  # fmt: skip
    first_start = timezone.now() - timedelta(minutes=3)
    Job.objects.filter(pk=job.pk).update(started_at=first_start)
    running(job, silent_for=60)
    # the tests run jobs inline (CELERY_TASK_ALWAYS_EAGER): the requeued job runs here, to the end
    assert jobs_resume_stalled() == [job.pk]
    job.refresh_from_db()
    assert (job.status, job.done, job.total, job.skipped) == ("done", 12, 12, 0)  # its own: done
    assert job.started_at == first_start  # the job began when it first ran, not when it resumed
    assert ParserPrediction.objects.filter(item__in=item_set.members.values("item")).count() == 12


def test_each_kind_goes_to_its_queue(one_job_of_each_kind, settings, sent):
    settings.NSM_VERIFY_QUEUE = "gpu"
    prefill, verify, export = one_job_of_each_kind
    Job.objects.filter(pk__in=[prefill.pk, verify.pk, export.pk]).update(status=Job.Status.QUEUED)
    for job in (prefill, verify, export):
        job_enqueue(job=job)
    assert sent == [((prefill.pk,), "celery"), ((verify.pk,), "gpu"), ((export.pk,), "celery")]


def test_the_worker_of_serve_and_runapp_takes_the_configured_queues(settings):
    settings.NSM_WORKER_QUEUES = ["celery", "verify"]
    command = worker_command(concurrency=2, hostname="nsm@%h")
    assert command[command.index("--queues") + 1] == "celery,verify"
    command = worker_command(concurrency=1, hostname="gpu@%h", queues=["verify"])
    assert command[command.index("--queues") + 1] == "verify"


class Slow:
    """The lexical parser, with a hook run inside each batch (a batch that takes long)."""

    def __init__(self, during_batch):
        self.inner = parser_build(backend="lexical")
        self.name, self.version = self.inner.name, self.inner.version
        self.during_batch = during_batch
        self.batches = 0

    def parse(self, texts):
        self.batches += 1
        self.during_batch(self.batches)
        return self.inner.parse(texts)


def wait_for(condition, *, seconds: float = 15, what: str):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)  # committed rows: the heartbeat thread has its own connection
def test_a_long_batch_still_beats(admin_user, settings, monkeypatch):
    settings.NSM_JOB_HEARTBEAT_SECONDS = 1
    settings.NSM_JOB_BATCH_SIZE = 100
    item_set = item_set_from_items(name="slow", items=make_items(n_copies=1))
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)
    beats = []

    def one_batch_through_two_beats(n):
        claimed = Job.objects.get(pk=job.pk).heartbeat_at
        beats.append(claimed)

        def beaten_twice():
            latest = Job.objects.get(pk=job.pk).heartbeat_at
            if latest != beats[-1]:
                beats.append(latest)
            return len(beats) >= 3

        wait_for(beaten_twice, what="two heartbeats during one batch")

    monkeypatch.setattr("predictions.prefill.parser_factory", lambda **kw: Slow(one_batch_through_two_beats))
    job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.done == job.total
    assert beats == sorted(beats) and len(set(beats)) == 3


@pytest.mark.django_db(transaction=True)
def test_a_run_that_lost_its_job_to_another_worker_stops_and_leaves_it_queued(
    admin_user, settings, monkeypatch
):
    settings.NSM_JOB_HEARTBEAT_SECONDS = 1
    settings.NSM_JOB_STALL_SECONDS = 3
    settings.NSM_JOB_BATCH_SIZE = 4
    item_set = item_set_from_items(name="taken", items=make_items(n_copies=3))
    job = job_prefill_start(user=admin_user, item_set=item_set, enqueue=False)

    def taken_over_during_the_first_batch(n):
        if n == 1:
            # what a sweeper does when this run's beats did not arrive (a database away, a pause)
            assert job_take_stalled(job.pk, timezone.now() + timedelta(seconds=1))
            wait_for(lambda: heartbeat_lost(job.pk), what="the heartbeat noticing the job is not its own")

    parser = Slow(taken_over_during_the_first_batch)
    monkeypatch.setattr("predictions.prefill.parser_factory", lambda **kw: parser)
    job_run(job.pk)
    job.refresh_from_db()
    assert parser.batches == 1, "the run stopped at its next batch"
    assert (job.status, job.runner, job.finished_at) == ("queued", "", None), "left to the new run"
    assert ParserPrediction.objects.filter(job=job).count() == 4


def test_a_worker_started_without_queues_takes_every_kinds_queue():
    """`celery -A config worker` with no -Q, as the docs said to run it before there were queues,
    still runs verification jobs (CELERY_TASK_QUEUES from NSM_WORKER_QUEUES)."""
    assert set(current_app.amqp.queues) == {"celery", "verify"}


def test_a_stall_limit_within_one_heartbeat_is_refused_naming_the_variable(tmp_path):
    """A live job would look stalled between two beats, and be taken from its worker."""
    result = manage(tmp_path, "check", NSM_JOB_HEARTBEAT_SECONDS="5", NSM_JOB_STALL_SECONDS="5")
    assert result.returncode != 0
    assert result.stderr.startswith("configuration error: NSM_JOB_HEARTBEAT_SECONDS=5 must be"), result.stderr
    assert "Traceback" not in result.stderr
    assert manage(tmp_path, "check", NSM_JOB_HEARTBEAT_SECONDS="5").returncode == 0, "stalled after 15 s"
