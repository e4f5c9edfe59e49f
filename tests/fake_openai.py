"""A small OpenAI-compatible chat server on 127.0.0.1, started by the tests that need one.

``reply`` decides each answer from the request payload: return a dict (sent as a chat completion
whose message content is that dict as JSON), a string (sent as the message content), or a tuple
(status, body) for anything else. Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.http_servers import serve_thread

Reply = Callable[[dict[str, Any]], Any]


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
    }


class FakeChatServer:
    def __init__(self, reply: Reply, delay: float = 0.0):
        self.reply = reply
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                payload = json.loads(self.rfile.read(length))
                with server.lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "json": payload}
                    )
                if server.delay:
                    time.sleep(server.delay)
                answer = server.reply(payload)
                if isinstance(answer, tuple):
                    status, body = answer
                else:
                    status = 200
                    content = answer if isinstance(answer, str) else json.dumps(answer)
                    body = json.dumps(completion(content))
                data = body.encode() if isinstance(body, str) else body
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = serve_thread(self.httpd)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def text_of(payload: dict[str, Any]) -> str:
    """The event text in a parser's chat request."""
    user = payload["messages"][-1]["content"]
    return user.split("Text: ", 1)[1].split("\n\n", 1)[0]
