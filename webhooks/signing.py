"""What goes over the wire: the signature, the headers and the HTTP POST itself (stdlib
http.client, with a connect and a read timeout of their own, no redirects followed). Pure apart
from the network: no database here."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import secrets
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

SIGNATURE_PREFIX = "sha256="
SECRET_PREFIX = "whsec_"
USER_AGENT = "nsm-audit-webhooks/1"


def secret_new() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: str, body: str) -> str:
    """``sha256=`` and the hex HMAC-SHA256 of ``timestamp.body`` under the hook's secret."""
    message = f"{timestamp}.{body}".encode()
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_valid(secret: str, timestamp: str, body: str, header: str, *, tolerance: int = 300) -> bool:
    """What a receiver checks (docs/webhooks.md has the same in a receiver of its own): the
    signature matches, compared in constant time, and the timestamp is at most ``tolerance``
    seconds from now, so a captured request cannot be replayed later."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs(time.time() - sent) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body), header)


def headers(
    *, event: str, delivery_id: int, secret: str, body: str, now: float | None = None
) -> dict[str, str]:
    timestamp = str(int(time.time() if now is None else now))
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-NSM-Event": event,
        "X-NSM-Delivery": str(delivery_id),
        "X-NSM-Timestamp": timestamp,
        "X-NSM-Signature": signature(secret, timestamp, body),
    }


@dataclass
class Outcome:
    """One attempt: the status code (None when no answer came), the answer's first bytes, why it
    failed (empty for a 2xx) and how long it took."""

    status: int | None
    response: str
    error: str
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def post(
    url: str, body: str, headers: dict[str, str], *, connect_timeout: float, read_timeout: float, excerpt: int
) -> Outcome:
    """POST ``body`` to ``url``: at most ``connect_timeout`` seconds to connect and
    ``read_timeout`` for each read of the answer, of which the first ``excerpt`` bytes are kept."""
    started = time.monotonic()

    def took() -> int:
        return round((time.monotonic() - started) * 1000)

    parts = urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if parts.scheme == "https":
        link: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname, parts.port, timeout=connect_timeout, context=ssl.create_default_context()
        )
    else:
        link = http.client.HTTPConnection(parts.hostname, parts.port, timeout=connect_timeout)
    phase = "connect"
    try:
        link.connect()
        link.sock.settimeout(read_timeout)
        phase = "read"
        link.request("POST", path, body=body.encode(), headers=headers)
        answer = link.getresponse()
        text = answer.read(excerpt).decode("utf-8", errors="replace")
        error = "" if 200 <= answer.status < 300 else f"HTTP {answer.status} {answer.reason}"
        return Outcome(answer.status, text, error, took())
    except TimeoutError:
        if phase == "connect":
            return Outcome(None, "", f"could not connect within {connect_timeout:g} s", took())
        return Outcome(None, "", f"no answer within {read_timeout:g} s", took())
    except (OSError, http.client.HTTPException) as problem:
        return Outcome(None, "", f"{type(problem).__name__}: {problem}"[:1000], took())
    finally:
        link.close()
