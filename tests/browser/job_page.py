"""Waiting on a job's page: on state, never on a wall-clock budget a busy machine can miss."""

from __future__ import annotations

import time

#: a bound on a job in a browser test, not a speed requirement: CI runs these on two cores beside
#: the other tests' workers, where a job of a few hundred items has taken over two minutes
JOB_DONE_SECONDS = 600


def wait_until_done(page) -> set[tuple[int, int]]:
    """Until the job page says done: every (value, max) the progress bar showed meanwhile."""
    bar = page.locator("#job-progress")
    seen: set[tuple[int, int]] = set()
    deadline = time.monotonic() + JOB_DONE_SECONDS
    # one read of the status per turn: the page swaps it in between two reads (it once read
    # "not done yet", then "done", and failed as if the job had ended otherwise)
    while (status := page.locator("#job-status").get_attribute("data-status")) != "done":
        assert status in ("queued", "running"), f"the job ended {status}, not done"
        assert time.monotonic() < deadline, f"not done in {JOB_DONE_SECONDS} s; the bar showed {sorted(seen)}"
        seen.add((int(bar.get_attribute("value") or 0), int(bar.get_attribute("max") or 0)))
        page.wait_for_timeout(100)
    return seen
