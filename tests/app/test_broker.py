"""The embedded broker (config.broker): a worker polling while the app writes a message never
reads it half written. kombu's own filesystem transport creates the message file before writing
it, and its reader moves the file away without the writer's lock: a CI run's worker read an empty
file there and died."""

from __future__ import annotations

from queue import Empty

import pytest
from kombu import Connection

from config.env import filesystem_broker

BODY = {"body": "a job to run", "properties": {}}


def channel(transport: str, folder):
    return Connection(
        "filesystem://", transport=transport, transport_options=filesystem_broker(folder)
    ).channel()


def put_while_a_worker_polls(transport: str, module: str, folder, monkeypatch) -> dict:
    """The writer's ``_put``, with a worker's ``_get`` run at the moment the message is serialised
    (after kombu's transport has created its file); what that poll got."""
    writer, worker = channel(transport, folder), channel(transport, folder)
    seen: dict = {}
    real = __import__(module, fromlist=["dumps"]).dumps

    def dumps_while_polled(payload):
        try:
            seen["poll"] = worker._get("jobs")
        except Empty:
            seen["poll"] = None
        except ValueError as error:  # JSONDecodeError: the worker's event loop dies of it
            seen["poll"] = error
        return real(payload)

    monkeypatch.setattr(f"{module}.dumps", dumps_while_polled)
    writer._put("jobs", BODY)
    monkeypatch.setattr(f"{module}.dumps", real)
    try:
        seen["after"] = worker._get("jobs")
    except Empty:
        seen["after"] = None
    return seen


def test_kombus_own_transport_hands_a_polling_worker_an_empty_file(tmp_path, monkeypatch):
    seen = put_while_a_worker_polls("filesystem", "kombu.transport.filesystem", tmp_path, monkeypatch)
    assert isinstance(seen["poll"], ValueError) and seen["after"] is None  # the worker dies, the job is lost


def test_the_embedded_broker_shows_a_worker_only_whole_messages(tmp_path, monkeypatch):
    seen = put_while_a_worker_polls("config.broker:Transport", "config.broker", tmp_path, monkeypatch)
    assert seen == {"poll": None, "after": BODY}
    assert sorted(p.name for p in (tmp_path / "queue").iterdir()) == []  # nothing left behind


def test_the_settings_use_it_without_redis(settings):
    if settings.REDIS_URL:
        pytest.skip(reason="this run's broker is Redis")
    assert settings.CELERY_BROKER_TRANSPORT == "config.broker:Transport"
