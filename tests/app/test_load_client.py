"""The load benchmark's client (benchmarks/load_client.py) against a stand-in server on loopback:
an annotator who runs out of work before the clock stops is counted, so a run in which the
annotators ran dry (and the server idled at its end) cannot pass for a full one."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchmarks.bench_load import figures_of
from benchmarks.load_client import Annotator, Tally


class NoWork(BaseHTTPRequestHandler):
    """Every list of pending assignments is empty."""

    def do_GET(self):
        body = json.dumps({"count": 0, "results": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Broken(NoWork):
    """Every list answers 500."""

    def do_GET(self):
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    thread.join()


@pytest.fixture
def empty_server():
    yield from serve(NoWork)


@pytest.fixture
def broken_server():
    yield from serve(Broken)


def test_an_annotator_out_of_work_before_the_end_is_counted(empty_server):
    tally = Tally()
    annotator = Annotator("ann-1", "s", empty_server, tally, time.monotonic() + 30, 0)
    annotator.start()
    annotator.join(timeout=10)
    assert not annotator.is_alive()  # it stopped at once, 30 s early
    assert tally.ran_out == ["ann-1"] and tally.statuses[("list", 200)] == 1


def test_an_annotator_still_working_when_the_clock_stops_is_not(empty_server):
    tally = Tally()
    Annotator("ann-1", "s", empty_server, tally, time.monotonic() - 1, 0).run()
    assert tally.ran_out == [] and not tally.statuses


def test_a_list_that_fails_is_counted_as_unexpected_not_as_out_of_work(broken_server):
    tally = Tally()
    annotator = Annotator("ann-1", "s", broken_server, tally, time.monotonic() + 0.5, 0)
    annotator.start()
    annotator.join(timeout=10)
    assert not annotator.is_alive() and tally.ran_out == []
    assert tally.statuses[("list", 500)] == len(tally.unexpected) >= 1  # it kept asking until the end


def result(ran_out: int) -> dict:
    lat = {"p50": 50.0, "p95": 80.0}
    return {
        "kind": "postgres", "users": 50, "seconds": 60.0, "workers": 3, "latency": {"fetch": lat},
        "server_cpu_ms_per_request": 1.6, "database_cpu_ms_per_request": 0.7,
        "client_cpu_ms_per_request": 0.3, "all": lat, "requests": 1000, "statuses": {},
        "users_over_throughput_ms": 3000.0, "load_average": [1.0, 1.0, 1.0], "server_errors": 0,
        "failed": 0, "unexpected": 0, "ran_out": ran_out, "connections_max": None,
        "writes": {"lost": 0, "duplicated": 0, "unacknowledged": 0, "answered": 10},
    }  # fmt: skip


@pytest.mark.parametrize("ran_out, met", [(0, True), (3, False)])
def test_the_figures_say_how_many_ran_out_and_none_may(ran_out, met):
    [out] = [f for f in figures_of(result(ran_out)) if f["name"].startswith("annotators out of work")]
    assert out["value"] == ran_out and out["met"] is met
