"""HTTP plumbing shared by the resources: auth, JSON, retries with backoff, timeouts and error mapping."""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlparse

import httpx

from .errors import APIConnectionError, APITimeoutError, MangoError, error_from_response

SDK_VERSION = "0.1.0"
DEFAULT_MAX_RETRIES = 2
DEFAULT_TIMEOUT = 60.0
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
# A server-sent retry-after longer than this is ignored in favour of the computed backoff.
_MAX_RETRY_AFTER = 60.0

Query = Mapping[str, Any]


def is_retryable_status(status: int) -> bool:
    """Whether a response status is worth retrying unchanged: 408, 429 and 5xx."""
    return status in (408, 429) or status >= 500


def retry_delay(
    retry: int, headers: httpx.Headers | None = None, rand: Callable[[], float] = random.random
) -> float:
    """Seconds before retry number ``retry`` (0-based): exponential backoff from 0.5 s capped at 8 s with up
    to 25 % downward jitter; a sane ``retry-after-ms`` / ``retry-after`` header takes precedence."""
    from_header = _retry_after(headers)
    if from_header is not None:
        return from_header
    base = min(INITIAL_RETRY_DELAY * 2.0**retry, MAX_RETRY_DELAY)
    return base * (1 - 0.25 * rand())


def _retry_after(headers: httpx.Headers | None) -> float | None:
    if headers is None:
        return None
    seconds: float | None = None
    raw_ms = (headers.get("retry-after-ms") or "").strip()
    if raw_ms:
        try:
            seconds = float(raw_ms) / 1000
        except ValueError:
            seconds = None
    raw = (headers.get("retry-after") or "").strip()
    if seconds is None and raw:
        try:
            seconds = float(raw)
        except ValueError:
            try:
                seconds = email.utils.parsedate_to_datetime(raw).timestamp() - time.time()
            except (TypeError, ValueError):
                seconds = None
    if seconds is None or seconds < 0 or seconds > _MAX_RETRY_AFTER:
        return None
    return seconds


def path_segment(value: str) -> str:
    """Encodes one path segment (ids are opaque to the client)."""
    if not isinstance(value, str) or value == "":
        raise TypeError("path parameter must be a non-empty string")
    return quote(value, safe="")


QueryItems = list[tuple[str, str | int | float | bool | None]]


def encode_query(query: Query | None) -> QueryItems:
    """Query parameters the way the server (Express "extended"/qs) reads them: nested mappings become
    ``key[sub]``, lists ``key[]``, booleans ``true``/``false``; ``None`` values are omitted."""
    out: QueryItems = []

    def add(key: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool):
            out.append((key, "true" if value else "false"))
        elif isinstance(value, (list, tuple)):
            for item in value:
                add(f"{key}[]", item)
        elif isinstance(value, Mapping):
            for sub, item in value.items():
                add(f"{key}[{sub}]", item)
        elif isinstance(value, (str, int, float)):
            out.append((key, str(value)))
        elif hasattr(value, "isoformat"):
            out.append((key, value.isoformat()))
        else:
            raise TypeError(f"query parameter {key} has unsupported type {type(value).__name__}")

    for key, value in (query or {}).items():
        add(key, value)
    return out


class HttpClient:
    """Sends requests for one client configuration."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.strip():
            raise TypeError("Mango: base_url is required")
        parsed = urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise TypeError("Mango: base_url must be an http:// or https:// URL")
        if not isinstance(api_key, str) or not api_key.strip():
            raise TypeError("Mango: api_key is required")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise TypeError("Mango: max_retries must be a non-negative integer")
        if not timeout > 0:
            raise TypeError("Mango: timeout must be positive")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_retries = max_retries
        self.timeout = timeout
        self.default_headers = dict(default_headers or {})
        self.http = http_client or httpx.Client()
        self.sleep = sleep

    def headers(self, accept: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        out = {"accept": accept, "user-agent": f"mango-sdk-python/{SDK_VERSION}"}
        out.update({k.lower(): v for k, v in self.default_headers.items()})
        out.update({k.lower(): v for k, v in (extra or {}).items()})
        out["authorization"] = f"Bearer {self.api_key}"
        return out

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Query | None = None,
        body: Any = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Sends one call, retrying connection errors, timeouts, 408, 429 and 5xx (every method, as the
        TypeScript SDK does). Returns the parsed JSON body (``None`` for 204/empty) or raises MangoError."""
        retries = self.max_retries if max_retries is None else max_retries
        headers = self.headers("application/json")
        content: bytes | None = None
        if body is not None:
            content = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        url = self.base_url + path
        params = encode_query(query)
        attempt = 0
        while True:
            try:
                response = self.http.request(
                    method,
                    url,
                    params=params,
                    content=content,
                    headers=headers,
                    timeout=timeout or self.timeout,
                )
            except httpx.TimeoutException as exc:
                error: MangoError = APITimeoutError(
                    f"Request timed out: {method} {url}", type="connection_error"
                )
                error.__cause__ = exc
            except httpx.TransportError as exc:
                error = APIConnectionError(f"Connection error: {method} {url}: {exc}")
                error.__cause__ = exc
            else:
                if 200 <= response.status_code < 300:
                    return _parse_success(response)
                error = error_from_response(response.status_code, response.headers, response.text)
                if not is_retryable_status(response.status_code) or attempt >= retries:
                    raise error
                self.sleep(retry_delay(attempt, response.headers))
                attempt += 1
                continue
            if attempt >= retries:
                raise error
            self.sleep(retry_delay(attempt))
            attempt += 1

    @contextmanager
    def stream(
        self, path: str, *, headers: Mapping[str, str], timeout: float | None
    ) -> Iterator[httpx.Response]:
        """Opens a long-lived GET in one attempt; ``timeout`` bounds connecting and each read."""
        url = self.base_url + path
        t = timeout or self.timeout
        with self.http.stream(
            "GET", url, headers=self.headers("text/event-stream", headers), timeout=httpx.Timeout(t)
        ) as response:
            yield response


def _parse_success(response: httpx.Response) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    try:
        return response.json()
    except ValueError as exc:
        raise MangoError(
            f"Invalid JSON in a {response.status_code} response",
            type="api_error",
            status=response.status_code,
            request_id=response.headers.get("request-id"),
            headers=response.headers,
        ) from exc
