"""Any OpenAI-compatible chat server: vLLM, Ollama, llama.cpp's server, hosted APIs.

Two modes:

- ``schema`` (default): structured output through the standard ``response_format`` with a JSON
  schema generated from the slot schema (``nsmcore.schema.json_schema``), no server-specific keys;
- ``free``: no schema, the reply is read as text, to measure legality under free decoding as the
  paper does.

Either way the reply is validated on the client: a server that ignores the schema cannot slip an
illegal value through. One bad reply is recorded as an illegal result and parsing goes on. A
server that cannot be reached (after retries with exponential backoff) or refuses the request
(HTTP 4xx other than 408/409/425/429) raises ParserUnavailable: every later text would fail too.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nsmcore.parsers.base import Parser, ParseResult, ParserUnavailable, Timer, result_from_text
from nsmcore.parsers.prompt import PROMPT_VERSION, chat_messages
from nsmcore.schema import SchemaProblem, json_schema

MODES = ("schema", "free")
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAICompatParser(Parser):
    backend = "openai"

    def __init__(
        self,
        base_url: str = "",
        model: str = "",
        *,
        api_key: str = "",
        mode: str = "schema",
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        concurrency: int = 4,
        max_tokens: int = 400,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not base_url:
            raise ParserUnavailable(
                "no server given: set NSM_OPENAI_BASE_URL (e.g. http://127.0.0.1:8001/v1)"
            )
        if not model:
            raise ParserUnavailable("no model given: set NSM_OPENAI_MODEL to a model the server serves")
        if mode not in MODES:
            raise ParserUnavailable(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.mode = mode
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.concurrency = max(1, concurrency)
        self.max_tokens = max_tokens
        self._sleep = sleep

    @property
    def name(self) -> str:
        return f"openai:{self.model}" if self.mode == "schema" else f"openai-free:{self.model}"

    @property
    def version(self) -> str:
        return f"p{PROMPT_VERSION}-{self.mode}"

    def payload(self, text: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(text, with_schema=self.mode == "schema"),
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        if self.mode == "schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "nsm_explication", "strict": True, "schema": json_schema()},
            }
        return body

    def parse(self, texts: Sequence[str]) -> list[ParseResult]:
        if self.concurrency == 1 or len(texts) == 1:
            return [self._parse_one(text) for text in texts]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(texts))) as pool:
            futures = [pool.submit(self._parse_one, text) for text in texts]
            try:
                return [future.result() for future in futures]
            except ParserUnavailable:
                for future in futures:
                    future.cancel()
                raise

    def _parse_one(self, text: str) -> ParseResult:
        timer = Timer()
        reply = self._post(self.payload(text))
        try:
            content = reply["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError(f"content is {type(content).__name__}")
        except (KeyError, IndexError, TypeError) as error:
            raw = json.dumps(reply)[:4000]
            problem = SchemaProblem("(reply)", f"no message content in the server's reply ({error})")
            return ParseResult(None, raw, (problem,), timer.per_item(1))
        return result_from_text(content, timer.per_item(1))

    def _post(self, payload: dict[str, Any]) -> Any:
        url = f"{self.base_url}/chat/completions"
        data = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    body = response.read()
            except urllib.error.HTTPError as error:
                detail = error.read()[:300].decode(errors="replace")
                last = f"HTTP {error.code}: {detail}".strip()
                if error.code in RETRY_STATUS:
                    continue
                raise ParserUnavailable(f"{url} refused the request: {last}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as error:
                reason = getattr(error, "reason", error)
                last = f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
                continue
            try:
                return json.loads(body)
            except json.JSONDecodeError:
                # a reply that is not JSON at all is one bad reply, not a dead server
                return {"unreadable_body": body[:4000].decode(errors="replace")}
        raise ParserUnavailable(f"cannot reach {url} after {self.retries + 1} attempts: {last}")
