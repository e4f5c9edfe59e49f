"""The client: one httpx connection pool, a token, and ``request``, through which every operation
goes. It raises the API's refusals as typed errors (nsmclient.errors), waits out a 503 as long as
the server asks (Retry-After, bounded) and walks paginated lists.

    from nsmclient import Client

    with Client("https://nsm.example.org", token=KEY) as api:
        for assignment in api.paginate(api.assignments_list, round="H1", status="pending"):
            ...

Every operation of the API is a method (nsmclient.api, generated from the schema); the
common flows are nsmclient.flows'."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx

from nsmclient.api.common import Page
from nsmclient.errors import error_for, retry_after
from nsmclient.flows import Flows

__version__ = "0.1.0"

T = TypeVar("T")
#: methods a server that answered 503 did not act on (and that are safe to send twice anyway)
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


class Client(Flows):
    """The API at ``base_url`` (``https://nsm.example.org``), as the user whose ``token`` it sends
    (``Authorization: Token <key>``; docs/api.md). ``Client.login`` gets a token with a username and
    password instead.

    A 503 with Retry-After (the database or the job queue briefly away) is sent again after the
    wait the server asks for, at most ``retries`` times, each wait at most ``max_wait`` seconds; a
    503 that kept something (a job, failed for the queue: its id in the body) is not repeated but
    raised, for ``start_job`` to resume that job. Network failures are httpx's exceptions."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float | httpx.Timeout = 30.0,
        retries: int = 3,
        max_wait: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.base_url = base_url.rstrip("/")
        self.retries, self.max_wait = retries, max_wait
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=timeout,
            headers={"User-Agent": f"nsmclient/{__version__}", **(headers or {})},
            transport=transport,
        )
        self.token = token

    @classmethod
    def login(cls, base_url: str, username: str, password: str, **options: Any) -> Client:
        """A client with a new token of this user's, made with their password (``POST /api/token/``
        over HTTP Basic). It replaces the user's earlier token, which stops working at once."""
        client = cls(base_url, **options)
        try:
            answer = client.request("POST", "/api/token/", auth=(username, password)).json()
        except Exception:
            client.close()
            raise
        client.token = answer["key"]
        return client

    @property
    def token(self) -> str | None:
        return self._token

    @token.setter
    def token(self, key: str | None) -> None:
        self._token = key
        if key:
            self._http.headers["Authorization"] = f"Token {key}"
        else:
            self._http.headers.pop("Authorization", None)

    def __repr__(self) -> str:
        return f"<Client {self.base_url} {'with a token' if self._token else 'without a token'}>"

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- the core ---------------------------------------------------------------------------------

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """Send one request (httpx's arguments: ``params``, ``json``, ``data``, ``files``,
        ``headers``, ``auth``) to ``url``, a path under ``base_url``. Answers under 400 are
        returned; a 503 with Retry-After is retried as the class says; any other answer of 400
        or more is raised as its ApiError."""
        method = method.upper()
        for attempt in range(self.retries + 1):
            response = self._http.request(method, url, **kwargs)
            if response.status_code < 400:
                return response
            wait = retry_after(response) if response.status_code == 503 else None
            if wait is None or attempt == self.retries or not self._may_repeat(method, response):
                break
            self._sleep(min(wait, self.max_wait))
        raise error_for(response)

    @staticmethod
    def _may_repeat(method: str, response: httpx.Response) -> bool:
        """A 503 acted on nothing unless it names what it kept (the job API's ``job``)."""
        if method in IDEMPOTENT:
            return True
        try:
            body = response.json()
        except ValueError:
            return True
        return not (isinstance(body, dict) and "job" in body)

    def _call(
        self,
        method: str,
        path: str,
        *,
        path_params: dict[str, Any] | None = None,
        query: dict[str, Any] | None = None,
        json: Any = None,
        multipart: Mapping[str, Any] | None = None,
        form: Mapping[str, Any] | None = None,
        files: tuple[str, ...] = (),
        binary: bool = False,
    ) -> Any:
        """One operation: the path's parameters quoted into it, the query without its unset
        parameters, the body as JSON, a form or multipart; the answer's JSON, bytes or None."""
        url = path.format(**{k: quote(str(v), safe="") for k, v in (path_params or {}).items()})
        kwargs: dict[str, Any] = {"params": _query(query or {})}
        if json is not None:
            kwargs["json"] = json
        if form is not None:
            kwargs["data"] = _form_fields(form)
        if multipart is not None:
            kwargs["data"] = _form_fields({k: v for k, v in multipart.items() if k not in files})
            kwargs["files"] = [
                (name, _upload(value))
                for name, value in multipart.items()
                if name in files and value is not None
            ]
        if not binary:
            kwargs["headers"] = {"Accept": "application/json"}
        response = self.request(method, url, **kwargs)
        if binary:
            return response.content
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    # --- lists and files --------------------------------------------------------------------------

    def paginate(self, operation: Callable[..., Page[T]], /, *args: Any, **params: Any) -> Iterator[T]:
        """Every row of a paginated list, page after page, as one iterator: ``operation`` is the
        list's method (``api.assignments_list``), ``args`` and ``params`` its other arguments.
        A page is fetched when the rows before it are used up."""
        page = params.pop("page", None) or 1
        while True:
            answer = operation(*args, page=page, **params)
            yield from answer["results"]
            if not answer.get("next"):
                return
            page += 1

    def _save(self, url: str, to: str | os.PathLike[str]) -> Path:
        """Stream a file the API serves (a path, or a URL on this server) to ``to`` (a file, or a
        folder to put it in under the name the server gives); written whole or not at all."""
        url = self._local(url)
        target = Path(to)
        with self._http.stream("GET", url) as response:
            if response.status_code >= 400:
                response.read()
                raise error_for(response)
            if target.is_dir():
                target = target / _attachment_name(response, url)
            partial = target.with_name(f".{target.name}.partial")
            try:
                with partial.open("wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
                partial.replace(target)
            finally:
                partial.unlink(missing_ok=True)
        return target

    def _local(self, url: str) -> str:
        """A URL the API gave (absolute, as the server saw its own name) as a path on ``base_url``:
        the token goes to this server only, even when a proxy renamed it."""
        parts = urlsplit(url)
        if not parts.scheme:
            return url
        base = urlsplit(self.base_url)
        if (parts.scheme, parts.netloc) == (base.scheme, base.netloc):
            return url
        return parts.path + (f"?{parts.query}" if parts.query else "")


def _query(query: Mapping[str, Any]) -> dict[str, Any]:
    """Unset parameters left out; booleans as the API reads them."""
    return {key: _scalar(value) for key, value in query.items() if value is not None}


def _scalar(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [_scalar(v) for v in value]
    return value


def _form_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A form's fields: a list repeats its field, a boolean is true or false, None is left out."""
    return {key: _scalar(value) for key, value in fields.items() if value is not None}


def _upload(value: Any) -> tuple[str, bytes]:
    """(file name, content) of an upload given as bytes, an open file, a path or a (name, content)
    pair. Read whole, so that a retried request sends it again."""
    if isinstance(value, tuple):
        name, content = value
        return name, content if isinstance(content, bytes) else content.read()
    if isinstance(value, (bytes, bytearray)):
        return "upload", bytes(value)
    if isinstance(value, os.PathLike):
        path = Path(value)
        return path.name, path.read_bytes()
    if hasattr(value, "read"):
        return Path(getattr(value, "name", "upload")).name, value.read()
    raise TypeError(f"an upload is bytes, a path, an open binary file or (name, content), not {type(value)}")


def _attachment_name(response: httpx.Response, url: str) -> str:
    disposition = response.headers.get("content-disposition", "")
    for part in disposition.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "filename" and value:
            name = Path(value.strip('"')).name
            if name and name not in (".", ".."):
                return name
    return Path(urlsplit(url).path.rstrip("/")).name or "download"
