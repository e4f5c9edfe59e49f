"""The client against the app's live server (pytest-django's ``live_server``: a real HTTP server
over the test database, so the tests need transactions, not a rolled-back test's single one)."""

from __future__ import annotations

import pytest

from annotator.tokens import token_create
from nsmclient import Client
from tests.client.stub import Stub


@pytest.fixture
def api(live_server, transactional_db):
    """``api(user)``: a client with a fresh token of that user's; ``api()`` one without a token."""
    clients: list[Client] = []

    def make(user=None, **options) -> Client:
        token = token_create(user=user).key if user is not None else None
        client = Client(live_server.url, token=token, timeout=60, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def stub():
    """A stub server on a free port of this machine, for the length of the test."""
    server = Stub()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def waits() -> list[float]:
    """The waits a stub client was asked for, recorded instead of slept."""
    return []


@pytest.fixture
def client(stub, waits):
    """A client of the stub, with a token, that records its waits."""
    with Client(stub.url, token="k", sleep=waits.append, retries=3, max_wait=60) as api:
        yield api
