"""A stub of the API for what a live server cannot be made to do on demand (a 503, a job that
fails): each path answers from its own queue of (status, headers, body), the last answer again when
the queue runs out, and the stub records every request it was sent."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.http_servers import serve_thread


class Stub:
    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], deque] = defaultdict(deque)
        #: (method, path with query, headers, body) of each request
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                stub.seen.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
                queue = stub.answers[(self.command, self.path.split("?")[0])]
                status, headers, body = queue.popleft() if len(queue) > 1 else queue[0]
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                kind = "application/octet-stream" if isinstance(body, bytes) else "application/json"
                self.send_response(status)
                for key, value in {"Content-Type": kind, **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = serve_thread(self.server)

    def answer(self, method: str, path: str, *answers: tuple[int, dict[str, str], Any]) -> None:
        self.answers[(method, path)].extend(answers)

    def requests(self) -> list[tuple[str, str]]:
        return [(method, path) for method, path, _, _ in self.seen]
