"""Background jobs: what was asked, by whom, and how far it got.

A job's row is its single source of truth: the worker writes progress into it after every batch,
the page polls it, and cancelling sets a flag the worker reads between batches. Nothing depends on
a Celery result backend.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.models import ItemSet, Round
from jobs.kinds import JobError, JobKind, Params, job_kind, registered_kind

ACTIVE = ("queued", "running")


class Job(models.Model):
    """One run of a registered kind of job (jobs.kinds): the plumbing's row, the same for every kind."""

    class Status(models.TextChoices):
        QUEUED = "queued", gettext_lazy("queued")
        RUNNING = "running", gettext_lazy("running")
        DONE = "done", gettext_lazy("done")
        FAILED = "failed", gettext_lazy("failed")
        CANCELLED = "cancelled", gettext_lazy("cancelled")

    # no choices: the kinds are registered by their modules (jobs.kinds), not listed here
    kind = models.CharField(max_length=16, help_text="a registered kind of job (jobs.kinds)")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    params = models.JSONField(
        default=dict, blank=True, help_text="the kind's parameters as JSON; read them as typed_params"
    )
    # what the job works on; two active jobs never share one (see the constraint)
    scope_key = models.CharField(max_length=300)
    item_set = models.ForeignKey(
        ItemSet, null=True, blank=True, on_delete=models.PROTECT, related_name="jobs"
    )
    round = models.ForeignKey(Round, null=True, blank=True, on_delete=models.PROTECT, related_name="jobs")
    engine = models.CharField(
        max_length=300, blank=True, help_text="the model or parser the job ran with (empty: not loaded yet)"
    )
    engine_version = models.CharField(max_length=100, blank=True, help_text="its version or revision")
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0, help_text="items handled: parsed now or already parsed")
    skipped = models.PositiveIntegerField(default=0, help_text="items that already had a prediction")
    legal = models.PositiveIntegerField(default=0)
    illegal = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    summary = models.JSONField(default=dict, blank=True, help_text="what the job found, for its page")
    cancel_requested = models.BooleanField(default=False)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Liveness: the run that holds the job writes heartbeat_at every NSM_JOB_HEARTBEAT_SECONDS
    # from a thread of its own (jobs.heartbeat), so a long batch still beats; a running job whose
    # heartbeat is older than NSM_JOB_STALL_SECONDS has lost its worker and is resumed by a sweeper.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    runner = models.CharField(
        max_length=100, blank=True, help_text="the run that holds the job: host/pid/token (empty: none)"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "scope_key"],
                condition=Q(status__in=ACTIVE),
                name="job_one_active_per_scope",
            ),
            models.CheckConstraint(condition=Q(done__lte=models.F("total")), name="job_done_le_total"),
        ]
        indexes = [models.Index(fields=["status"], name="job_status_idx")]

    def __str__(self) -> str:
        return f"{self.kind_label} #{self.pk} ({self.status})"

    @property
    def job_kind(self) -> JobKind:
        """The registered kind; JobError when none is registered under this job's name."""
        return job_kind(self.kind)

    @property
    def typed_params(self) -> Params:
        """The stored parameters, parsed into the kind's dataclass; JobError naming the bad field."""
        return self.job_kind.params.from_json(self.params)

    @property
    def kind_label(self) -> str:
        kind = registered_kind(self.kind)
        return kind.label if kind else self.kind

    @property
    def unit(self) -> str:
        """What total and done count: items, or a training job's steps."""
        kind = registered_kind(self.kind)
        return kind.unit if kind else _("items")

    @property
    def description(self) -> str:
        """What the job does and with what, in one line for the pages (HTML-safe)."""
        try:
            return self.job_kind.describe(self, self.typed_params)
        except JobError as error:
            return _("unreadable parameters: %(error)s") % {"error": error}

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def subject(self) -> str:
        if self.round_id:
            return _("round %(name)s") % {"name": self.round.name}
        if self.item_set_id:
            return _("item set %(name)s") % {"name": self.item_set.name}
        kind = registered_kind(self.kind)
        return kind.whole if kind else "-"

    @property
    def percent(self) -> int:
        """Share done; a job with nothing counted yet is at 0 until it is done (a finished job
        that had nothing to do is at 100)."""
        if not self.total:
            return 100 if self.status == self.Status.DONE else 0
        return int(100 * self.done / self.total)

    @property
    def parsed(self) -> int:
        """Items parsed by this run (not counting those that already had a prediction)."""
        return self.legal + self.illegal

    @property
    def elapsed(self) -> timedelta | None:
        if not self.started_at:
            return None
        return (self.finished_at or timezone.now()) - self.started_at

    @property
    def rate(self) -> float | None:
        """Items parsed per second by this run."""
        elapsed = self.elapsed
        if not elapsed or not self.parsed:
            return None
        return self.parsed / max(elapsed.total_seconds(), 1e-3)

    @property
    def seconds_left(self) -> float | None:
        rate = self.rate
        if self.status != self.Status.RUNNING or not rate:
            return None
        return (self.total - self.done) / rate

    @property
    def last_sign_of_life(self):
        """When the run that holds the job last showed it was alive: its heartbeat (a row from
        before heartbeats: its last progress write)."""
        return self.heartbeat_at or self.updated_at

    @property
    def seconds_silent(self) -> float:
        """Seconds since the last sign of life of the run that holds the job."""
        return (timezone.now() - self.last_sign_of_life).total_seconds()

    @property
    def stalled(self) -> bool:
        """Running with no heartbeat for NSM_JOB_STALL_SECONDS (about three beats): its worker is
        gone. A running worker's sweeper puts it back in the queue within seconds."""
        return self.status == self.Status.RUNNING and self.seconds_silent > settings.NSM_JOB_STALL_SECONDS

    @property
    def can_resume(self) -> bool:
        """Failed, cancelled or stalled, and nothing known that would fail it again at once."""
        return self.resumable_state and not self.resume_problem

    @property
    def resumable_state(self) -> bool:
        return self.status in (self.Status.FAILED, self.Status.CANCELLED) or self.stalled

    @property
    def resume_problem(self) -> str:
        """Why resuming would fail again at once (its kind says: a model or setting gone); "" else."""
        if not self.resumable_state:
            return ""
        check = self.job_kind.resume_problem
        if check is None:
            return ""
        try:
            params = self.typed_params
        except JobError as error:  # parameters this version cannot read would fail the run too
            return str(error)
        return check(self, params) or ""
