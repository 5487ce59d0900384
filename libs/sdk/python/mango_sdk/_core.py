"""HTTP plumbing shared by the resources: auth, JSON, retries with backoff, timeouts and error mapping."""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import IO, Any
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

FileContent = bytes | bytearray | memoryview | str | IO[bytes]
FileInput = FileContent | tuple[str, FileContent] | tuple[str, FileContent, str]
"""A multipart file part: bytes, a binary file object, ``(filename, content)`` or
``(filename, content, content_type)``. A file object without a usable name is sent as ``blob``."""

MultipartParts = Sequence[tuple[str, Any, bool]]
"""``(field name, value, is_file)`` in order; a list value of a file field sends one part per item."""


def _file_tuple(value: FileInput) -> tuple[str, Any, str | None]:
    if isinstance(value, tuple):
        if len(value) == 2:
            return value[0], _content(value[1]), None
        return value[0], _content(value[1]), value[2]
    name = getattr(value, "name", None)
    filename = name.rsplit("/", 1)[-1] if isinstance(name, str) and name else "blob"
    return filename, _content(value), None


def _content(value: FileContent) -> Any:
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def _multipart(parts: MultipartParts) -> tuple[list[tuple[str, Any]], list[tuple[str, str]], bool]:
    """httpx ``files`` and ``data`` lists, and whether the body can be re-sent (no unseekable stream)."""
    files: list[tuple[str, Any]] = []
    data: list[tuple[str, str]] = []
    replayable = True
    for name, value, is_file in parts:
        if value is None:
            continue
        items = (
            list(value)
            if is_file and isinstance(value, (list, tuple)) and not _is_file_tuple(value)
            else [value]
        )
        for item in items:
            if is_file:
                filename, content, content_type = _file_tuple(item)
                if not isinstance(content, bytes):
                    replayable = replayable and _seekable(content)
                files.append((name, (filename, content, content_type or "application/octet-stream")))
            else:
                data.append((name, str(item)))
    return files, data, replayable


def _form_fields(data: list[tuple[str, str]]) -> dict[str, Any] | None:
    """httpx form fields (a repeated name becomes a list)."""
    out: dict[str, Any] = {}
    for name, value in data:
        if name in out:
            out[name] = [*out[name], value] if isinstance(out[name], list) else [out[name], value]
        else:
            out[name] = value
    return out or None


def _is_file_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) in (2, 3) and isinstance(value[0], str)


def _seekable(stream: Any) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, ValueError):
        return False


def _rewind(files: list[tuple[str, Any]]) -> None:
    for _, (_, content, _) in files:
        if not isinstance(content, bytes):
            content.seek(0)


def is_retryable_status(status: int) -> bool:
    """Whether a response status is worth retrying unchanged: 408, 429 and 5xx."""
    return status in (408, 429) or status >= 500


IDEMPOTENCY_KEY_HEADER = "idempotency-key"
_CALLER_KEY: ContextVar[str | None] = ContextVar("mango_idempotency_key", default=None)


@contextmanager
def idempotency_key(key: str) -> Iterator[None]:
    """Sends ``key`` as the ``Idempotency-Key`` of the POST made inside the block (instead of a fresh
    UUID), e.g. a key saved before a crash: ``with idempotency_key(k): client.sessions.create(...)``. One
    key names one request: make one POST per block (docs/api-guide.md, "Idempotent requests")."""
    token = _CALLER_KEY.set(key)
    try:
        yield
    finally:
        _CALLER_KEY.reset(token)


@dataclass(frozen=True)
class ResponseInfo:
    """What ``on_response`` is told about each successful (2xx) response."""

    method: str
    url: str
    status: int
    request_id: str | None
    """The response's ``request-id``; on a replay, the id of the request that ran."""
    idempotency_key: str | None
    """The ``Idempotency-Key`` the call sent (every POST sends one)."""
    replayed: bool
    """Whether the server answered with the stored response of an earlier request with the same key."""


def _add_idempotency_key(method: str, headers: dict[str, str]) -> None:
    """A POST gets one key per call (the caller's, else a fresh UUID), re-sent by every retry of it."""
    if method.upper() == "POST" and IDEMPOTENCY_KEY_HEADER not in headers:
        headers[IDEMPOTENCY_KEY_HEADER] = _CALLER_KEY.get() or str(uuid.uuid4())


def is_idempotency_in_progress(status: int, text: str) -> bool:
    """A 409 saying the request with this call's key is still running: retried after ``retry-after``."""
    if status != 409:
        return False
    try:
        body = json.loads(text)
    except ValueError:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    return isinstance(details, dict) and details.get("error_code") == "idempotency_in_progress"


def _retryable(response: httpx.Response, headers: Mapping[str, str]) -> bool:
    return is_retryable_status(response.status_code) or (
        IDEMPOTENCY_KEY_HEADER in headers and is_idempotency_in_progress(response.status_code, response.text)
    )


def _response_info(
    method: str, url: str, response: httpx.Response, headers: Mapping[str, str]
) -> ResponseInfo:
    return ResponseInfo(
        method=method.upper(),
        url=url,
        status=response.status_code,
        request_id=response.headers.get("request-id"),
        idempotency_key=headers.get(IDEMPOTENCY_KEY_HEADER),
        replayed=response.headers.get("idempotent-replayed") == "true",
    )


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
        on_response: Callable[[ResponseInfo], None] | None = None,
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
        self.on_response = on_response

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
        parts: MultipartParts | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        accept: Sequence[int] = (),
    ) -> Any:
        """Sends one call, retrying connection errors, timeouts, 408, 429 and 5xx (every method, as the
        TypeScript SDK does). Returns the parsed JSON body (``None`` for 204/empty) or raises MangoError.
        ``parts`` sends ``multipart/form-data`` instead of JSON; ``accept`` lists non-2xx statuses whose
        body is a result (readiness 503)."""
        retries = self.max_retries if max_retries is None else max_retries
        headers = self.headers("application/json")
        _add_idempotency_key(method, headers)
        content, files, data, replayable = _encode_body(body, parts, headers)
        if not replayable:
            retries = 0
        url = self.base_url + path
        params = encode_query(query)
        attempt = 0
        while True:
            if files:
                _rewind(files)
            try:
                response = self.http.request(
                    method,
                    url,
                    params=params,
                    content=content,
                    files=files or None,
                    data=_form_fields(data),
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
                if 200 <= response.status_code < 300 or response.status_code in accept:
                    if self.on_response is not None and 200 <= response.status_code < 300:
                        self.on_response(_response_info(method, url, response, headers))
                    return _parse_success(response)
                error = error_from_response(response.status_code, response.headers, response.text)
                if not _retryable(response, headers) or attempt >= retries:
                    raise error
                self.sleep(retry_delay(attempt, response.headers))
                attempt += 1
                continue
            if attempt >= retries:
                raise error
            self.sleep(retry_delay(attempt))
            attempt += 1

    @contextmanager
    def download(
        self,
        method: str,
        path: str,
        *,
        query: Query | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[httpx.Response]:
        """A binary response whose body is streamed: retries like ``request`` until a 2xx arrives, then
        yields the open response (read it with ``iter_bytes()``); closed when the block ends."""
        retries = self.max_retries if max_retries is None else max_retries
        url = self.base_url + path
        request = self.http.build_request(
            method,
            url,
            params=encode_query(query),
            headers=self.headers("*/*"),
            timeout=timeout or self.timeout,
        )
        attempt = 0
        while True:
            try:
                response = self.http.send(request, stream=True)
            except httpx.TimeoutException as exc:
                error: MangoError = APITimeoutError(
                    f"Request timed out: {method} {url}", type="connection_error"
                )
                error.__cause__ = exc
                delay = retry_delay(attempt)
            except httpx.TransportError as exc:
                error = APIConnectionError(f"Connection error: {method} {url}: {exc}")
                error.__cause__ = exc
                delay = retry_delay(attempt)
            else:
                if 200 <= response.status_code < 300:
                    try:
                        yield response
                    finally:
                        response.close()
                    return
                response.read()
                response.close()
                error = error_from_response(response.status_code, response.headers, response.text)
                if not is_retryable_status(response.status_code):
                    raise error
                delay = retry_delay(attempt, response.headers)
            if attempt >= retries:
                raise error
            self.sleep(delay)
            attempt += 1

    @contextmanager
    def stream(
        self, path: str, *, query: Query | None = None, headers: Mapping[str, str], timeout: float | None
    ) -> Iterator[httpx.Response]:
        """Opens a long-lived GET in one attempt; ``timeout`` bounds connecting and each read."""
        url = self.base_url + path
        t = timeout or self.timeout
        with self.http.stream(
            "GET",
            url,
            params=encode_query(query),
            headers=self.headers("text/event-stream", headers),
            timeout=httpx.Timeout(t),
        ) as response:
            yield response


def _encode_body(
    body: Any, parts: MultipartParts | None, headers: dict[str, str]
) -> tuple[bytes | None, list[tuple[str, Any]], list[tuple[str, str]], bool]:
    if parts is not None:
        files, data, replayable = _multipart(parts)
        return None, files, data, replayable
    if body is not None:
        headers["content-type"] = "application/json"
        return json.dumps(body).encode("utf-8"), [], [], True
    return None, [], [], True


class AsyncHttpClient:
    """The asyncio twin of :class:`HttpClient` (same auth, retries, errors and timeouts) on ``httpx.AsyncClient``."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        on_response: Callable[[ResponseInfo], None] | None = None,
    ) -> None:
        # A sync client validates the settings and builds the headers; it never sends anything.
        self._config = HttpClient(
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            timeout=timeout,
            default_headers=default_headers,
            http_client=_UNUSED,
        )
        self.base_url = self._config.base_url
        self.api_key = api_key
        self.max_retries = max_retries
        self.timeout = timeout
        self.default_headers = self._config.default_headers
        self.http = http_client or httpx.AsyncClient()
        self.sleep = sleep
        self.on_response = on_response

    def headers(self, accept: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return self._config.headers(accept, extra)

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Query | None = None,
        body: Any = None,
        parts: MultipartParts | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        accept: Sequence[int] = (),
    ) -> Any:
        retries = self.max_retries if max_retries is None else max_retries
        headers = self.headers("application/json")
        _add_idempotency_key(method, headers)
        content, files, data, replayable = _encode_body(body, parts, headers)
        if not replayable:
            retries = 0
        url = self.base_url + path
        params = encode_query(query)
        attempt = 0
        while True:
            if files:
                _rewind(files)
            try:
                response = await self.http.request(
                    method,
                    url,
                    params=params,
                    content=content,
                    files=files or None,
                    data=_form_fields(data),
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
                if 200 <= response.status_code < 300 or response.status_code in accept:
                    if self.on_response is not None and 200 <= response.status_code < 300:
                        self.on_response(_response_info(method, url, response, headers))
                    return _parse_success(response)
                error = error_from_response(response.status_code, response.headers, response.text)
                if not _retryable(response, headers) or attempt >= retries:
                    raise error
                await self.sleep(retry_delay(attempt, response.headers))
                attempt += 1
                continue
            if attempt >= retries:
                raise error
            await self.sleep(retry_delay(attempt))
            attempt += 1

    @asynccontextmanager
    async def download(
        self,
        method: str,
        path: str,
        *,
        query: Query | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[httpx.Response]:
        retries = self.max_retries if max_retries is None else max_retries
        url = self.base_url + path
        request = self.http.build_request(
            method,
            url,
            params=encode_query(query),
            headers=self.headers("*/*"),
            timeout=timeout or self.timeout,
        )
        attempt = 0
        while True:
            try:
                response = await self.http.send(request, stream=True)
            except httpx.TimeoutException as exc:
                error: MangoError = APITimeoutError(
                    f"Request timed out: {method} {url}", type="connection_error"
                )
                error.__cause__ = exc
                delay = retry_delay(attempt)
            except httpx.TransportError as exc:
                error = APIConnectionError(f"Connection error: {method} {url}: {exc}")
                error.__cause__ = exc
                delay = retry_delay(attempt)
            else:
                if 200 <= response.status_code < 300:
                    try:
                        yield response
                    finally:
                        await response.aclose()
                    return
                await response.aread()
                await response.aclose()
                error = error_from_response(response.status_code, response.headers, response.text)
                if not is_retryable_status(response.status_code):
                    raise error
                delay = retry_delay(attempt, response.headers)
            if attempt >= retries:
                raise error
            await self.sleep(delay)
            attempt += 1

    @asynccontextmanager
    async def stream(
        self, path: str, *, query: Query | None = None, headers: Mapping[str, str], timeout: float | None
    ) -> AsyncIterator[httpx.Response]:
        url = self.base_url + path
        t = timeout or self.timeout
        async with self.http.stream(
            "GET",
            url,
            params=encode_query(query),
            headers=self.headers("text/event-stream", headers),
            timeout=httpx.Timeout(t),
        ) as response:
            yield response


_UNUSED = httpx.Client()


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
