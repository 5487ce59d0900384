"""The Mango clients: :class:`Mango` (sync) and :class:`AsyncMango` (asyncio), both on httpx."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from ._core import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    AsyncHttpClient,
    HttpClient,
    ResponseInfo,
)
from ._generated.resources import AsyncResources, Resources
from .resources import Agents, AsyncAgents, AsyncEnvironments, Environments

__all__ = ["AsyncMango", "Mango"]


class Mango(Resources):
    """Typed client for Mango's ``/v1`` API.

    .. code-block:: python

        mango = Mango(base_url="http://localhost:8080", api_key="mango_ak_...")
        agent = mango.agents.create({"name": "triage", "model": "claude-sonnet-4-6"})
        for a in mango.agents.list(limit=50):
            print(a["id"])
        with open("report.pdf", "rb") as f:
            file = mango.files.upload(file=("report.pdf", f, "application/pdf"))

    Every operation of openapi.yaml is a method of the resource its operationId names
    (``environments.work.poll`` → ``mango.environments.work.poll``). Every call sends
    ``Authorization: Bearer <api_key>``, retries connection errors, timeouts, 408, 429 and 5xx up to
    ``max_retries`` times with jittered exponential backoff, and raises a typed ``MangoError`` carrying the
    error envelope. Responses are plain dicts typed by the generated models. Every POST sends an
    ``Idempotency-Key`` (a fresh UUID per call, the same on each of its retries; ``idempotency_key(k)``
    sends yours), so a retry after a lost response writes nothing twice; ``on_response`` is called with
    each successful response's ``ResponseInfo`` (``request_id``, ``idempotency_key``, ``replayed``).
    """

    agents: Agents
    environments: Environments

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
        on_response: Callable[[ResponseInfo], None] | None = None,
    ) -> None:
        http = HttpClient(
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            timeout=timeout,
            default_headers=default_headers,
            http_client=http_client,
            on_response=on_response,
        )
        super().__init__(http)
        self.agents = Agents(http)
        self.environments = Environments(http)

    @property
    def base_url(self) -> str:
        """The normalized base URL (no trailing slash)."""
        return self._http.base_url

    def with_token(self, token: str, *, base_url: str | None = None) -> Mango:
        """A client with the same settings bound to another credential, e.g. the Work token from a
        decoded Work secret: ``client.with_token(s["sessions_token"], base_url=s["api_base_url"])``."""
        return Mango(
            base_url=base_url or self._http.base_url,
            api_key=token,
            max_retries=self._http.max_retries,
            timeout=self._http.timeout,
            default_headers=self._http.default_headers,
            http_client=self._http.http,
            on_response=self._http.on_response,
        )

    def request(
        self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None
    ) -> Any:
        """Any path with the same auth, retries and typed errors (every operation also has a resource
        method): ``client.request("GET", "/v1/memory_stores", query={"limit": 10})``."""
        return self._http.request(method, path, query=query, body=body)

    def close(self) -> None:
        """Closes the connection pool."""
        self._http.http.close()

    def __enter__(self) -> Mango:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncMango(AsyncResources):
    """The asyncio client: the same resources and methods as :class:`Mango`, awaited
    (``await mango.agents.create(...)``); lists are ``async for``, streams ``async for``, downloads
    ``async with``."""

    agents: AsyncAgents
    environments: AsyncEnvironments

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float = DEFAULT_TIMEOUT,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        on_response: Callable[[ResponseInfo], None] | None = None,
    ) -> None:
        http = AsyncHttpClient(
            base_url=base_url,
            api_key=api_key,
            max_retries=max_retries,
            timeout=timeout,
            default_headers=default_headers,
            http_client=http_client,
            on_response=on_response,
        )
        super().__init__(http)
        self.agents = AsyncAgents(http)
        self.environments = AsyncEnvironments(http)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def with_token(self, token: str, *, base_url: str | None = None) -> AsyncMango:
        return AsyncMango(
            base_url=base_url or self._http.base_url,
            api_key=token,
            max_retries=self._http.max_retries,
            timeout=self._http.timeout,
            default_headers=self._http.default_headers,
            http_client=self._http.http,
            on_response=self._http.on_response,
        )

    async def request(
        self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None
    ) -> Any:
        return await self._http.request(method, path, query=query, body=body)

    async def aclose(self) -> None:
        await self._http.http.aclose()

    async def __aenter__(self) -> AsyncMango:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
