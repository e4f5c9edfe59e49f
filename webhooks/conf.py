"""The webhooks' settings, each with its default here (a settings module may set any of them):

- ``NSM_WEBHOOK_RETRY_SECONDS``: the waits before each retry of a failed attempt; after the
  first attempt and one retry per wait, the delivery is failed. Default 10 s, 1 min, 5 min,
  30 min, 2 h: six attempts over about two and a half hours.
- ``NSM_WEBHOOK_CONNECT_TIMEOUT`` (3 s) and ``NSM_WEBHOOK_READ_TIMEOUT`` (10 s, each read).
- ``NSM_WEBHOOK_LEASE_SECONDS`` (120): how long an attempt handed to the worker holds its
  delivery; an attempt whose worker died is taken up again by the sweep after this.
- ``NSM_WEBHOOK_SWEEP_SECONDS`` (5): how often each worker looks for due retries (0: never; then
  ``manage.py webhooks send-due`` sends them).
- ``NSM_WEBHOOK_ALLOW_PRIVATE`` (False): whether a hook may reach this machine or a private
  network (loopback, RFC 1918, link-local, carrier-grade NAT); off, such an address is refused
  when the hook is registered, and a name resolving to one when the worker calls it."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

RETRY_SECONDS = (10, 60, 300, 1800, 7200)


def retry_waits() -> tuple[int, ...]:
    return tuple(int(s) for s in getattr(settings, "NSM_WEBHOOK_RETRY_SECONDS", RETRY_SECONDS))


def max_attempts() -> int:
    return 1 + len(retry_waits())


def connect_timeout() -> float:
    return float(getattr(settings, "NSM_WEBHOOK_CONNECT_TIMEOUT", 3))


def read_timeout() -> float:
    return float(getattr(settings, "NSM_WEBHOOK_READ_TIMEOUT", 10))


def lease() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "NSM_WEBHOOK_LEASE_SECONDS", 120)))


def allow_private() -> bool:
    return bool(getattr(settings, "NSM_WEBHOOK_ALLOW_PRIVATE", False))


def sweep_seconds() -> int:
    return int(getattr(settings, "NSM_WEBHOOK_SWEEP_SECONDS", 5))
