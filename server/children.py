"""The supervising process of `manage.py serve` and `manage.py runapp` (server.supervisor starts it):
it starts the web server and the Celery worker, watches them and stops them. It imports no Django,
so it holds the interpreter and little else for as long as the server runs (issue 24's memory goal).

Both children run in a session of their own, so a terminal's Ctrl-C or a process manager's signal
reaches only the supervisor, which stops them in order: SIGTERM, then SIGKILL after a grace period.
SIGTERM or SIGINT to the supervisor stops both. A child named in ``restart`` (the job worker) that
exits by itself is started again after a backoff (1 s, doubling up to a minute, back to 1 s once it
has run a minute): a worker killed by the OOM killer or crashed by a broker restart never takes the
web server down, and the jobs it held are resumed by the sweeper of the worker that replaces it
(jobs.tasks). Any other child that exits stops the rest and the supervisor exits non-zero.
On Linux each child also gets SIGTERM if the supervisor itself is killed (PR_SET_PDEATHSIG), so
not even a SIGKILL leaves a worker taking jobs with nobody watching it."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

SPEC_VARIABLE = "NSM_SUPERVISOR_SPEC"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


# the first wait before a crashed child is started again, the longest, and how long a child must
# run for its next crash to start from the first wait again
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
BACKOFF_RESET_AFTER = 60.0


class Stop(Exception):
    """A signal asked the supervisor to stop."""


def supervise(
    children: dict[str, list[str]],
    *,
    env: dict[str, str],
    grace: float = 30.0,
    restart: frozenset[str] | set[str] = frozenset(),
    write: Callable[[str], None] = print,
) -> int:
    """Start each child, wait until a signal comes or a child not in ``restart`` exits, then stop
    them all; a child in ``restart`` that exits is started again after a backoff. Returns 0 after
    a signal, 1 when a child exited by itself (its name and status are written)."""
    received: list[int] = []

    def on_signal(signum, frame):
        received.append(signum)
        raise Stop

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    started: dict[str, subprocess.Popen] = {}
    began: dict[str, float] = {}
    backoff = dict.fromkeys(restart, BACKOFF_FIRST)
    due: dict[str, float] = {}  # a crashed child's name -> when it is started again
    code = 0

    def start(name: str) -> None:
        preexec = _die_with_parent if sys.platform.startswith("linux") else None
        started[name] = subprocess.Popen(children[name], env=env, start_new_session=True, preexec_fn=preexec)
        began[name] = time.monotonic()
        write(f"{name} started (pid {started[name].pid})")

    try:
        for name in children:
            start(name)
        while True:
            now = time.monotonic()
            for name, process in list(started.items()):
                status = process.poll()
                if status is None or name in due:
                    continue
                if name not in restart:
                    write(f"{name} exited with status {status}; stopping the others")
                    code = 1
                    raise Stop
                if now - began[name] >= BACKOFF_RESET_AFTER:
                    backoff[name] = BACKOFF_FIRST
                wait = backoff[name]
                backoff[name] = min(wait * 2, BACKOFF_MAX)
                due[name] = now + wait
                write(f"{name} exited with status {status}; starting it again in {wait:g} s")
            for name, when in list(due.items()):
                if now >= when:
                    del due[name]
                    start(name)
            time.sleep(0.2)
    except Stop:
        if received:
            write(f"{signal.Signals(received[0]).name} received; stopping {', '.join(started)}")
    finally:
        # a second signal while stopping must not interrupt the stop
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        _stop_all(started, grace=grace, write=write)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _stop_all(started: dict[str, subprocess.Popen], *, grace: float, write: Callable[[str], None]) -> None:
    for process in started.values():
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for name, process in started.items():
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            write(f"{name} did not stop within {grace:.0f} s; killing it")
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main() -> None:
    """The supervising process server.supervisor.exec_supervisor starts: reads its spec,
    supervises, exits with supervise's status."""
    spec = json.loads(os.environ.pop(SPEC_VARIABLE))
    code = supervise(
        spec["children"],
        env=spec["env"],
        grace=spec["grace"],
        restart=set(spec["restart"]),
        write=lambda line: print(line, flush=True),
    )
    if code:
        print(f"CommandError: {spec['failure']}", file=sys.stderr, flush=True)
    sys.exit(code)
