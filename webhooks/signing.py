"""What goes over the wire: the signature, the headers and the HTTP POST itself (stdlib
http.client, with a connect and a read timeout of their own, no redirects followed). Pure apart
from the network: no database here.

A hook's URL is the worker's to call, so unless private addresses are allowed (the setting
NSM_WEBHOOK_ALLOW_PRIVATE) the host's name is resolved, every address it gives is checked, and the
connection goes to an address that was checked: a name that answers differently between the check
and the call (DNS rebinding) still reaches nothing private."""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import secrets
import socket
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


PRIVATE_HOSTS = ("localhost",)  # RFC 6761: the name and every name under it are this machine


def address_refused(address: str) -> bool:
    """Whether ``address`` (an IPv4 or IPv6 address) is this machine's or a network's that the
    internet does not route: loopback, private (RFC 1918, unique local), link-local (a cloud's
    metadata service at 169.254.169.254), shared (carrier-grade NAT), unspecified, multicast."""
    ip = ipaddress.ip_address(address.split("%")[0])  # an IPv6 zone (fe80::1%eth0) says nothing
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 is 127.0.0.1
    return not ip.is_global or ip.is_multicast


def host_refused(host: str) -> bool:
    """Whether a URL's host, as typed, names a private or local address (no lookup: a name is
    checked when it is resolved, at each attempt)."""
    name = host.lower().rstrip(".")
    if name in PRIVATE_HOSTS or name.endswith(tuple(f".{h}" for h in PRIVATE_HOSTS)):
        return True
    try:
        return address_refused(name.strip("[]"))
    except ValueError:
        pass
    try:  # the old forms the resolver still reads as IPv4: 127.1, 2130706433, 0x7f.0.0.1
        return address_refused(str(ipaddress.IPv4Address(socket.inet_aton(name))))
    except OSError:  # a name, not an address
        return False


class AddressRefused(OSError):
    pass


def _resolved(host: str, port: int, *, allow_private: bool) -> list[tuple[str, int]]:
    """The addresses ``host`` resolves to, every one checked unless ``allow_private``."""
    found = [info[4][:2] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]
    for address, _port in found if not allow_private else ():
        if address_refused(address):
            raise AddressRefused(
                f"refused: {host.rstrip('.')} resolves to {address}, a private or local address "
                "(a deployment that sends hooks to its own network sets NSM_WEBHOOK_ALLOW_PRIVATE)"
            )
    return found


def _connected(addresses: list[tuple[str, int]], timeout: float) -> socket.socket:
    """A connection to the first of ``addresses`` that answers (the last one's error otherwise)."""
    error: OSError = OSError("no address")
    for address in addresses:
        try:
            return socket.create_connection(address, timeout=timeout)
        except TimeoutError:
            raise
        except OSError as problem:
            error = problem
    raise error


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
    url: str,
    body: str,
    headers: dict[str, str],
    *,
    connect_timeout: float,
    read_timeout: float,
    excerpt: int,
    allow_private: bool = False,
) -> Outcome:
    """POST ``body`` to ``url``: at most ``connect_timeout`` seconds to connect and
    ``read_timeout`` for each read of the answer, of which the first ``excerpt`` bytes are kept.
    Unless ``allow_private``, a host that resolves to a private or local address is not called."""
    started = time.monotonic()

    def took() -> int:
        return round((time.monotonic() - started) * 1000)

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    link: http.client.HTTPConnection | None = None
    sock: socket.socket | None = None
    phase = "connect"
    try:
        sock = _connected(_resolved(host, port, allow_private=allow_private), connect_timeout)
        if parts.scheme == "https":
            context = ssl.create_default_context()
            sock = context.wrap_socket(sock, server_hostname=host)  # the name's certificate
            link = http.client.HTTPSConnection(host, port, timeout=connect_timeout, context=context)
        else:
            link = http.client.HTTPConnection(host, port, timeout=connect_timeout)
        link.sock = sock  # the checked address's connection; Host: is still the URL's
        sock.settimeout(read_timeout)
        phase = "read"
        link.request("POST", path, body=body.encode(), headers=headers)
        answer = link.getresponse()
        text = answer.read(excerpt).decode("utf-8", errors="replace")
        error = "" if 200 <= answer.status < 300 else f"HTTP {answer.status} {answer.reason}"
        return Outcome(answer.status, text, error, took())
    except AddressRefused as refused:
        return Outcome(None, "", str(refused), took())
    except TimeoutError:
        if phase == "connect":
            return Outcome(None, "", f"could not connect within {connect_timeout:g} s", took())
        return Outcome(None, "", f"no answer within {read_timeout:g} s", took())
    except (OSError, http.client.HTTPException) as problem:
        return Outcome(None, "", f"{type(problem).__name__}: {problem}"[:1000], took())
    finally:
        if link is not None:
            link.close()
        elif sock is not None:
            sock.close()
