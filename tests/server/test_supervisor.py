"""server.children.supervise with real child processes (small Python programs): a child named in
``restart`` that exits is started again after a backoff that doubles; any other child that exits
stops the rest. The served deployment is tested end to end in tests/integration/test_site_faults.py."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from server import children as supervising

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]


def crash_after(seconds: float, marker) -> list[str]:
    """A child that records each start in ``marker`` and exits with status 3 after ``seconds``."""
    record = f"open({str(marker)!r}, 'a').write('start\\n')"
    code = f"import time; {record}; time.sleep({seconds}); raise SystemExit(3)"
    return [sys.executable, "-c", code]


def stop_after(seconds: float) -> threading.Timer:
    """SIGTERM to this process (the supervisor) after ``seconds``, as a process manager would."""
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.start()
    return timer


def supervise_for(seconds: float | None, children: dict[str, list[str]], lines: list[str]) -> int:
    """supervise(children) with the worker restartable, SIGTERMed after ``seconds`` (None: never)."""
    timer = stop_after(seconds) if seconds else None
    try:
        return supervising.supervise(
            children, env=dict(os.environ), grace=5, restart={"worker"}, write=lines.append
        )
    finally:
        if timer:
            timer.cancel()


@pytest.fixture
def fast_backoff(monkeypatch):
    monkeypatch.setattr(supervising, "BACKOFF_FIRST", 0.2)
    monkeypatch.setattr(supervising, "BACKOFF_MAX", 0.8)


def test_a_restartable_child_is_started_again_with_a_doubling_backoff(tmp_path, fast_backoff):
    marker = tmp_path / "starts"
    lines: list[str] = []
    code = supervise_for(6, {"web": SLEEP, "worker": crash_after(0.1, marker)}, lines)
    assert code == 0  # stopped by the signal, not by the crashing worker
    waits = [line.split("again in ")[1] for line in lines if "starting it again" in line]
    assert waits[:4] == ["0.2 s", "0.4 s", "0.8 s", "0.8 s"]  # doubling, then capped
    # every start the supervisor reports ran the program, and every exit it reports followed one;
    # the last start may be stopped by the signal before its mark is written (a slow machine takes
    # a while to start Python), so the marks lie between the exits and the starts
    marks = marker.read_text().count("start")
    started = sum(line.startswith("worker started") for line in lines)
    exited = sum(line.startswith("worker exited with status 3") for line in lines)
    assert exited >= 4 and started - 1 <= exited <= marks <= started, (started, exited, marks)
    assert "worker exited with status 3; starting it again in 0.2 s" in lines
    assert not any("web exited" in line for line in lines)
    assert "SIGTERM received; stopping web, worker" in lines


def test_a_child_not_named_in_restart_stops_the_others(tmp_path, fast_backoff):
    marker = tmp_path / "starts"
    lines: list[str] = []
    started = time.monotonic()
    code = supervise_for(None, {"web": crash_after(0.3, marker), "worker": SLEEP}, lines)
    assert code == 1
    assert "web exited with status 3; stopping the others" in lines
    assert marker.read_text().count("start") == 1
    assert time.monotonic() - started < 30  # the sleeping worker was stopped, not waited for


def test_the_backoff_starts_again_from_the_first_wait_after_a_long_run(tmp_path, monkeypatch):
    monkeypatch.setattr(supervising, "BACKOFF_FIRST", 0.2)
    monkeypatch.setattr(supervising, "BACKOFF_MAX", 10.0)
    monkeypatch.setattr(supervising, "BACKOFF_RESET_AFTER", 0.5)  # a run of 0.6 s counts as long
    marker = tmp_path / "starts"
    lines: list[str] = []
    supervise_for(4, {"worker": crash_after(0.6, marker)}, lines)
    waits = [line.split("again in ")[1] for line in lines if "starting it again" in line]
    assert len(waits) >= 3 and set(waits) == {"0.2 s"}  # never doubled: each run lasted long enough
