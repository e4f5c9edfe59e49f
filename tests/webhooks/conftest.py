"""A local HTTP receiver the tests start (http.server in a thread on 127.0.0.1, a free port), a
port where nothing listens, and the worker's queue seen from the tests: ``queued`` collects the
attempts the app publishes (instead of the broker) and ``work`` runs them as the worker would."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from dataclasses import dataclass, field

import pytest

from tests.http_servers import serve_thread
from webhooks import services
from webhooks.models import Webhook
from webhooks.tasks import deliver


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: str

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers each POST with the next of ``answers`` (the last one repeats), or waits for
    ``release`` first when ``hold`` is set."""

    url: str = ""
    answers: list[int] = field(default_factory=lambda: [200])
    received: list[Received] = field(default_factory=list)
    hold: bool = False
    release: threading.Event = field(default_factory=threading.Event)

    def events(self) -> list[str]:
        return [r.headers["X-NSM-Event"] for r in self.received]


def _handler(receiver: Receiver) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            if receiver.hold:
                receiver.release.wait(timeout=30)
            receiver.received.append(Received(self.path, dict(self.headers.items()), body))
            status = receiver.answers[min(len(receiver.received), len(receiver.answers)) - 1]
            answer = json.dumps({"seen": len(receiver.received)}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args) -> None:  # quiet
            pass

    return Handler


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        pass  # a client that gave up waiting (a timeout test) closed the connection: expected


@pytest.fixture
def receiver():
    state = Receiver()
    server = _Server(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = serve_thread(server)
    thread.start()
    yield state
    state.release.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def closed_port() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"


@pytest.fixture
def queued(monkeypatch) -> list[tuple[int, int]]:
    """The attempts published for the worker, (delivery id, attempt), in order."""
    published: list[tuple[int, int]] = []
    monkeypatch.setattr(services, "delivery_enqueue", lambda pk, attempt: published.append((pk, attempt)))
    return published


@pytest.fixture
def work(queued):
    """Run every attempt published so far as the worker's task would, then forget them."""

    def run() -> int:
        n = len(queued)
        for pk, attempt in list(queued):
            deliver(pk, attempt)
        del queued[:n]
        return n

    return run


@pytest.fixture
def hook(admin_user, receiver) -> Webhook:
    return services.webhook_create(user=admin_user, url=receiver.url, events=["*"])


@pytest.fixture
def commit(django_capture_on_commit_callbacks):
    """``with commit():`` runs what the block leaves for after its commit (the test's own
    transaction never commits): the events, and the publishing of deliveries."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
