"""The load benchmark's client (benchmarks/bench_load.py): one thread per annotator, fetching
and submitting through the server's API as a browser would (stdlib http.client, a new connection
per request, the session cookie and a CSRF token), and what they saw."""

from __future__ import annotations

import http.client
import json
import random
import secrets
import string
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import pride_slots  # noqa: E402
from benchmarks.load_db import ROUND  # noqa: E402

P_REVISE, P_STALE = 0.2, 0.1  # after a submit: revise it, or send a stale save


@dataclass
class Tally:
    """What the annotators saw, shared by their threads (appends to lists are atomic)."""

    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter = field(default_factory=Counter)  # (kind, status)
    unexpected: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # no answer at all
    saved: list[tuple[int, int, str]] = field(default_factory=list)  # every 200: (assignment, version, note)
    # annotators who found no pending assignment before the clock stopped: the server idled
    # for them, and the run is not the load it says
    ran_out: list[str] = field(default_factory=list)


class Annotator(threading.Thread):
    def __init__(self, name: str, session: str, port: int, tally: Tally, stop_at: float, think: float):
        super().__init__(daemon=True)
        self.name_ = name
        csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        self.headers = {
            "Cookie": f"sessionid={session}; csrftoken={csrf}",
            "X-CSRFToken": csrf,  # what a browser's script sends from the cookie
            "Host": "127.0.0.1",
            "Accept": "application/json",
        }
        self.port, self.tally, self.stop_at, self.think = port, tally, stop_at, think
        self.rng = random.Random(name)
        self.queue: list[int] = []
        self.sent = 0

    def request(self, kind: str, method: str, path: str, body: dict | None = None) -> tuple[int, Any]:
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        start = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            conn.close()
        except OSError as error:
            self.tally.failed.append(f"{kind} {path}: {error!r}")
            return 0, None
        elapsed = time.perf_counter() - start
        if kind != "warm-up":
            self.tally.latency[kind].append(elapsed)
            self.tally.statuses[(kind, response.status)] += 1
        try:
            return response.status, json.loads(payload)
        except ValueError:
            return response.status, payload[:200]

    def expect(self, kind: str, status: int, want: int, answer: Any) -> bool:
        if status == want:
            return True
        if status:
            self.tally.unexpected.append(f"{self.name_} {kind}: {status} {str(answer)[:200]}")
        return False

    def submit(self, kind: str, assignment: int, base_version: int, want: int) -> int | None:
        self.sent += 1
        note = f"{self.name_}-{self.sent}"
        body = {**pride_slots(), "notes": note, "base_version": base_version, "time_spent_ms": 1200}
        status, answer = self.request(kind, "POST", f"/api/assignments/{assignment}/annotation/", body)
        if not self.expect(kind, status, want, answer):
            return None
        if status == 200:
            self.tally.saved.append((assignment, answer["version"], note))
            return answer["version"]
        return base_version

    def refill(self, kind: str = "list") -> bool:
        """Fetch the pending assignments; False when the list did not answer (counted as failed
        or unexpected)."""
        status, answer = self.request(kind, "GET", f"/api/assignments/?round={ROUND}&status=pending")
        if not self.expect(kind, status, 200, answer):
            return False
        self.queue = [row["id"] for row in answer["results"]]
        return True

    def run(self) -> None:
        while time.monotonic() < self.stop_at:
            if not self.queue:
                if not self.refill():
                    continue  # asked again, as a reader would reload; each failure is counted
                if not self.queue:
                    self.tally.ran_out.append(self.name_)
                    return
            assignment = self.queue.pop(0)
            status, answer = self.request("fetch", "GET", f"/api/assignments/{assignment}/")
            if not self.expect("fetch", status, 200, answer):
                continue
            loaded = answer["annotation"]["version"] if answer["annotation"] else 0
            version = self.submit("submit", assignment, loaded, 200)
            if version is not None and self.rng.random() < P_REVISE:
                self.submit("revise", assignment, version, 200)
            if version is not None and self.rng.random() < P_STALE:
                self.submit("stale", assignment, loaded, 409)
            if self.think:
                time.sleep(self.think)  # a person reading the next item, not a wait for a condition


def warm_up(annotators: list[Annotator], rounds: int = 3) -> None:
    """Every gunicorn worker imports the views on its first request (seconds, on a busy machine
    without bytecode caches): a few rounds of requests from all annotators at once, so that each
    worker has had some before the clock starts, whichever of them accepts which."""
    for _ in range(rounds):
        threads = [threading.Thread(target=a.refill, args=("warm-up",)) for a in annotators]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    tally = annotators[0].tally if annotators else None
    if tally and (tally.unexpected or tally.failed):  # e.g. sessions the server does not accept
        raise RuntimeError(f"the warm-up's requests failed: {(tally.failed + tally.unexpected)[:3]}")
