"""The thread each of the suite's own HTTP servers runs in (the OIDC provider, the fake OpenAI
server, the webhook receiver, the client's stub)."""

from __future__ import annotations

import threading
from socketserver import BaseServer

#: how often a server's loop looks for a shutdown: socketserver's default, 0.5 s, is what every
#: ``shutdown()`` waited at the end of a test (35 SSO tests spent 17 s of their 40 there)
POLL_SECONDS = 0.02


def serve_thread(server: BaseServer) -> threading.Thread:
    """A daemon thread, not yet started, that serves ``server`` until its ``shutdown()``."""
    return threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True)
