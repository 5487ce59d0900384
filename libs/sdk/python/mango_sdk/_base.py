"""The calls every generated resource method makes (``_generated/resources.py``), sync and async: JSON,
multipart upload, streamed binary download, auto-paging lists and the reconnecting event stream."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass
from os import PathLike
from types import TracebackType
from typing import Any, TypeVar, cast

import httpx

from ._core import (
    AsyncHttpClient,
    HttpClient,
    MultipartParts,
    Query,
    is_retryable_status,
    path_segment,
    retry_delay,
)
from ._generated.models import SessionEvent
from .errors import APIConnectionError, APITimeoutError, MangoError, error_from_response
from .pagination import AsyncPaginator, Paginator
from .sse import SseParser

__all__ = [
    "AsyncBinaryResponse",
    "AsyncResource",
    "BinaryResponse",
    "StreamEvent",
    "SyncResource",
    "seg",
]

T = TypeVar("T")
seg = path_segment


def _merge(query: Mapping[str, Any] | None, extra: Query | None) -> dict[str, Any]:
    out = {k: v for k, v in (query or {}).items() if v is not None}
    out.update(extra or {})
    return out


@dataclass(frozen=True)
class StreamEvent:
    """One Session event from a stream: ``id`` is its sequence number (pass it as ``last_event_id``)."""

    id: str
    event: SessionEvent


class BinaryResponse(AbstractContextManager["BinaryResponse"]):
    """A streamed binary download. Use it as a context manager (the connection is released at the end)::

    with client.files.content(file_id) as body:
        for chunk in body.iter_bytes():
            out.write(chunk)
    """

    def __init__(self, cm: AbstractContextManager[httpx.Response]) -> None:
        self._cm = cm
        self.response = cm.__enter__()

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    @property
    def content_type(self) -> str | None:
        value: str | None = self.response.headers.get("content-type")
        return value

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        return self.response.iter_bytes(chunk_size)

    def read(self) -> bytes:
        """The whole body (then closes)."""
        try:
            return self.response.read()
        finally:
            self.close()

    def write_to_file(self, path: str | PathLike[str]) -> int:
        """Streams the body into ``path``; returns the number of bytes written (then closes)."""
        size = 0
        try:
            with open(path, "wb") as out:
                for chunk in self.response.iter_bytes():
                    out.write(chunk)
                    size += len(chunk)
        finally:
            self.close()
        return size

    def close(self) -> None:
        self._cm.__exit__(None, None, None)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._cm.__exit__(exc_type, exc, tb)


class AsyncBinaryResponse(AbstractAsyncContextManager["AsyncBinaryResponse"]):
    """The asyncio twin of :class:`BinaryResponse` (``async with``, ``aiter_bytes()``, ``read()``)."""

    def __init__(self, cm: AbstractAsyncContextManager[httpx.Response], response: httpx.Response) -> None:
        self._cm = cm
        self.response = response

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    @property
    def content_type(self) -> str | None:
        value: str | None = self.response.headers.get("content-type")
        return value

    def aiter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        return self.response.aiter_bytes(chunk_size)

    async def read(self) -> bytes:
        try:
            return await self.response.aread()
        finally:
            await self.aclose()

    async def write_to_file(self, path: str | PathLike[str]) -> int:
        size = 0
        try:
            with open(path, "wb") as out:
                async for chunk in self.response.aiter_bytes():
                    out.write(chunk)
                    size += len(chunk)
        finally:
            await self.aclose()
        return size

    async def aclose(self) -> None:
        await self._cm.__aexit__(None, None, None)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._cm.__aexit__(exc_type, exc, tb)


class SyncResource:
    """Base of every generated sync resource."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        body: Any = None,
        parts: MultipartParts | None = None,
        timeout: float | None = None,
        accept: Sequence[int] = (),
    ) -> Any:
        return self._http.request(
            method,
            path,
            query=_merge(query, extra_query),
            body=body,
            parts=parts,
            timeout=timeout,
            accept=accept,
        )

    def _list(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[Any]:
        params = _merge(query, extra_query)
        start = params.pop("page", None)
        return Paginator(
            lambda page: self._http.request(method, path, query={**params, "page": page}, timeout=timeout),
            start,
        )

    def _download(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> BinaryResponse:
        return BinaryResponse(
            self._http.download(method, path, query=_merge(query, extra_query), timeout=timeout)
        )

    def _stream(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[StreamEvent]:
        return _stream_events(
            self._http,
            path,
            _merge(query, extra_query),
            last_event_id,
            self._http.max_retries if max_retries is None else max_retries,
            timeout,
        )


class AsyncResource:
    """Base of every generated async resource."""

    def __init__(self, http: AsyncHttpClient) -> None:
        self._http = http

    async def _request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        body: Any = None,
        parts: MultipartParts | None = None,
        timeout: float | None = None,
        accept: Sequence[int] = (),
    ) -> Any:
        return await self._http.request(
            method,
            path,
            query=_merge(query, extra_query),
            body=body,
            parts=parts,
            timeout=timeout,
            accept=accept,
        )

    def _list(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[Any]:
        params = _merge(query, extra_query)
        start = params.pop("page", None)

        async def fetch(page: str | None) -> dict[str, Any]:
            return cast(
                dict[str, Any],
                await self._http.request(method, path, query={**params, "page": page}, timeout=timeout),
            )

        return AsyncPaginator(fetch, start)

    async def _download(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncBinaryResponse:
        cm = self._http.download(method, path, query=_merge(query, extra_query), timeout=timeout)
        response = await cm.__aenter__()
        return AsyncBinaryResponse(cm, response)

    def _stream(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[StreamEvent]:
        return _astream_events(
            self._http,
            path,
            _merge(query, extra_query),
            last_event_id,
            self._http.max_retries if max_retries is None else max_retries,
            timeout,
        )


# The event stream --------------------------------------------------------------------------------------
# Pings are skipped. When the connection drops (or is silent for ``timeout`` seconds) it reconnects with
# Last-Event-ID set to the last yielded id, so every event is seen once and in order; ``max_retries``
# consecutive failed reconnects (with backoff) raise the last error. It ends after ``session.deleted``.


class _Frames:
    """Turns SSE text into events, dropping pings and anything at or before the last yielded id."""

    def __init__(self, last_id: str | None) -> None:
        self.last_id = last_id
        self.parser = SseParser()

    def push(self, chunk: str) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for frame in self.parser.push(chunk):
            if frame.event == "ping":
                continue
            if frame.id is not None and self.last_id is not None and not _is_after(frame.id, self.last_id):
                continue
            event = _parse_event(frame.data)
            if frame.id is not None:
                self.last_id = frame.id
            out.append(StreamEvent(id=frame.id or self.last_id or "", event=event))
        return out


def _stream_failure(exc: httpx.HTTPError, path: str) -> MangoError:
    error: MangoError
    if isinstance(exc, httpx.TimeoutException):
        error = APITimeoutError(f"Event stream timed out: GET {path}", type="connection_error")
    else:
        error = APIConnectionError(f"Event stream connection error: GET {path}: {exc}")
    error.__cause__ = exc
    return error


def _stream_events(
    http: HttpClient,
    path: str,
    query: Mapping[str, Any],
    last_id: str | None,
    max_retries: int,
    timeout: float | None,
) -> Iterator[StreamEvent]:
    failures = 0  # consecutive connections that failed before yielding anything
    frames = _Frames(last_id)
    while True:
        retry_headers: httpx.Headers | None = None
        try:
            lid = frames.last_id
            with http.stream(
                path, query=query, headers={} if lid is None else {"last-event-id": lid}, timeout=timeout
            ) as response:
                if not 200 <= response.status_code < 300:
                    response.read()
                    error = error_from_response(response.status_code, response.headers, response.text)
                    if not is_retryable_status(response.status_code):
                        raise error
                    retry_headers = response.headers
                else:
                    for chunk in response.iter_text():
                        for ev in frames.push(chunk):
                            failures = 0
                            yield ev
                            if ev.event["type"] == "session.deleted":
                                return
                    error = APIConnectionError(f"Event stream closed before session.deleted: GET {path}")
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            error = _stream_failure(exc, path)
        if failures >= max_retries:
            raise error
        http.sleep(retry_delay(failures, retry_headers))
        failures += 1


async def _astream_events(
    http: AsyncHttpClient,
    path: str,
    query: Mapping[str, Any],
    last_id: str | None,
    max_retries: int,
    timeout: float | None,
) -> AsyncIterator[StreamEvent]:
    failures = 0
    frames = _Frames(last_id)
    while True:
        retry_headers: httpx.Headers | None = None
        try:
            lid = frames.last_id
            async with http.stream(
                path, query=query, headers={} if lid is None else {"last-event-id": lid}, timeout=timeout
            ) as response:
                if not 200 <= response.status_code < 300:
                    await response.aread()
                    error = error_from_response(response.status_code, response.headers, response.text)
                    if not is_retryable_status(response.status_code):
                        raise error
                    retry_headers = response.headers
                else:
                    async for chunk in response.aiter_text():
                        for ev in frames.push(chunk):
                            failures = 0
                            yield ev
                            if ev.event["type"] == "session.deleted":
                                return
                    error = APIConnectionError(f"Event stream closed before session.deleted: GET {path}")
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            error = _stream_failure(exc, path)
        if failures >= max_retries:
            raise error
        await http.sleep(retry_delay(failures, retry_headers))
        failures += 1


def _parse_event(data: str) -> SessionEvent:
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise MangoError("Invalid JSON in an event stream frame", type="api_error") from exc
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise MangoError("Event stream frame is not a Session event", type="api_error")
    return cast(SessionEvent, event)


_DIGITS = re.compile(r"^\d+$")


def _is_after(a: str, b: str) -> bool:
    """Whether SSE id ``a`` comes after ``b``; ids that are not both sequence numbers count as in order."""
    if not _DIGITS.match(a) or not _DIGITS.match(b):
        return True
    return int(a) > int(b)


Fetch = Callable[[str | None], Any]
