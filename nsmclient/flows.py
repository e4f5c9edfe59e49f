"""The common flows on top of the generated operations, each a step a script takes: import a file
to annotatable work, make a round, take the next assignment and submit it, start a job and wait for
it while it reports its progress, download an export.

    api.import_items(file=Path("crowd-enVent-train.tsv"), item_set="batch-1", round="H1",
                     annotators=["alice", "bob"])
    assignment = api.next_assignment(round="H1")
    api.submit_annotation(assignment, {"experiencer": "i", ...})
    job = api.wait_for_job(api.start_job(api.jobs_export_create, {"round": 3, "verify": False}))
    api.download_export(job, "exports/")
"""

from __future__ import annotations

import os
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, Unpack

from nsmclient.api import Operations
from nsmclient.api.corpus import ImportIn, ImportOut, RoundOut
from nsmclient.api.jobs import JobOut
from nsmclient.api.rounds import RoundIn
from nsmclient.api.work import AnnotationOut, AssignmentOut
from nsmclient.errors import JobFailed, ServiceUnavailable

B = TypeVar("B")
#: the statuses a job ends in (jobs.models.Job.Status)
FINISHED = {"done", "failed", "cancelled"}


class Flows(Operations):
    """The flows; ``nsmclient.Client`` sends their requests."""

    _sleep: Callable[[float], None] = staticmethod(time.sleep)
    retries: int = 3
    max_wait: float = 60.0

    @abstractmethod
    def _save(self, url: str, to: str | os.PathLike[str]) -> Path:
        """Stream a download to ``to``, shown there only once complete (nsmclient.client.Client)."""

    # --- admins -----------------------------------------------------------------------------------

    def import_items(self, **fields: Unpack[ImportIn]) -> ImportOut:
        """``POST /api/imports/``: a file's rows as items, optionally an item set of them
        (``item_set``) and a round over it (``round``, ``annotators``, the round's options), in one
        transaction. ``file`` is a path (``pathlib.Path``), bytes, an open binary file or
        ``(name, content)``; its format comes from its name unless ``format`` says it."""
        return self.imports_create(fields)

    def create_round(self, **fields: Unpack[RoundIn]) -> RoundOut:
        """``POST /api/rounds/``: a round over an item set (``item_set``, its id) with its
        ``annotators`` (usernames or ids) and options, as the new-round page makes it."""
        return self.rounds_create(fields)

    # --- annotators -------------------------------------------------------------------------------

    def next_assignment(self, round: str | int | None = None) -> AssignmentOut | None:
        """The caller's first pending assignment (in ``round``, a name or id; else in any), in their
        queue's order; None when nothing is pending."""
        page = self.assignments_list(round=None if round is None else str(round), status="pending")
        return page["results"][0] if page["results"] else None

    def submit_annotation(
        self,
        assignment: int | AssignmentOut,
        values: Mapping[str, Any],
        *,
        base_version: int | None = None,
    ) -> AnnotationOut:
        """Save an annotation: ``values`` are the slots (every slot is required) and, optionally,
        ``notes``, ``residue``, ``flags``, ``time_spent_ms``. ``base_version`` is the version the
        work was loaded at; left out, the assignment's current one (read again when given by id).
        A save over a newer version is a Conflict."""
        if isinstance(assignment, int):
            assignment = self.assignments_retrieve(assignment)
        if base_version is None:
            annotation = assignment.get("annotation") or {}
            base_version = int(annotation.get("version", 0))
        body: Any = {**values, "base_version": base_version}
        return self.assignments_annotation_create(assignment["id"], body)

    # --- jobs and exports -------------------------------------------------------------------------

    def start_job(self, start: Callable[[B], JobOut], body: B) -> JobOut:
        """Start a job with its operation (``api.jobs_export_create``) and body. When the job
        queue is down the server keeps the job, failed, and answers 503 with Retry-After: the job
        is resumed after that wait, at most ``retries`` times; then the ServiceUnavailable is
        raised."""
        try:
            return start(body)
        except ServiceUnavailable as refused:
            if refused.job is None:
                raise
            job_id, wait, last = refused.job, refused.retry_after, refused
        for _ in range(self.retries):
            self._sleep(min(wait if wait is not None else 1.0, self.max_wait))
            self.jobs_resume_create(job_id)
            current = self.jobs_retrieve(job_id)  # sending it happens after the answer's commit
            if current["status"] != "failed":
                return current
            wait = 1.0
        raise last

    def wait_for_job(
        self,
        job: int | JobOut,
        *,
        progress: Callable[[JobOut], None] | None = None,
        interval: float = 1.0,
        timeout: float | None = None,
    ) -> JobOut:
        """Poll a job every ``interval`` seconds until it ends; ``progress`` gets each state read
        (``done``, ``total``, ``percent``, ``seconds_left``). Returns the finished job (its
        ``download``: an export's file); JobFailed when it failed or was cancelled, TimeoutError
        after ``timeout`` seconds."""
        job_id = job if isinstance(job, int) else job["id"]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.jobs_retrieve(job_id)
            if progress is not None:
                progress(state)
            if state["status"] in FINISHED:
                if state["status"] != "done":
                    raise JobFailed(state)
                return state
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job #{job_id} is still {state['status']} after {timeout} s")
            self._sleep(interval)

    def download_export(self, export: int | Mapping[str, Any] | str, to: str | os.PathLike[str]) -> Path:
        """Save an export's file to ``to`` (a file name, or a folder: the server's file name in
        it). ``export`` is its id, a finished job or export (their ``download``) or that link."""
        if isinstance(export, int):
            url = f"/api/exports/{export}/download/"
        elif isinstance(export, str):
            url = export
        else:
            url = export.get("download") or ""
            if not url:
                raise ValueError(f"nothing to download yet: {export.get('status', 'no link')}")
        return self._save(url, to)

    def export_round(
        self,
        round: int,
        to: str | os.PathLike[str],
        *,
        verify: bool = False,
        progress: Callable[[JobOut], None] | None = None,
    ) -> Path:
        """Export a round's resolved gold (an export job), wait for it and save the archive."""
        job = self.start_job(self.jobs_export_create, {"round": round, "verify": verify})
        return self.download_export(self.wait_for_job(job, progress=progress), to)
