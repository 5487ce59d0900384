"""Hand-written refinements of the generated resources (``_generated/resources.py``): only what the
contract cannot say. Every other operation comes from openapi.yaml unchanged."""

from __future__ import annotations

from typing import Any, cast

from ._base import StreamEvent
from ._core import Query
from ._generated import resources as gen
from ._generated.models import PolledWork
from .pagination import AsyncPaginator, Paginator

__all__ = [
    "Agents",
    "AsyncAgents",
    "AsyncEnvironments",
    "AsyncWorkQueue",
    "Environments",
    "StreamEvent",
    "WorkQueue",
]

# A long poll may block for block_ms: the call's timeout is stretched by that much.


_HEALTHCHECK: Any = {"data": {"type": "healthcheck"}}


class WorkQueue(gen.EnvironmentsWork):
    """``client.environments.work``: ``poll`` returns ``None`` for an empty queue (the server's ``{}``);
    ``create`` defaults to a healthcheck."""

    def create(self, environment_id: str, params: Any = None, **kwargs: Any) -> Any:
        return super().create(environment_id, params if params is not None else _HEALTHCHECK, **kwargs)

    def poll(  # type: ignore[override]
        self,
        environment_id: str,
        *,
        block_ms: int | None = None,
        reclaim_older_than_ms: int | None = None,
        worker_id: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> PolledWork | None:
        """``GET .../work/poll`` (Environment key): the claimed item with its ``secret``, or ``None``."""
        polled = super().poll(
            environment_id,
            block_ms=block_ms,
            reclaim_older_than_ms=reclaim_older_than_ms,
            worker_id=worker_id,
            extra_query=extra_query,
            timeout=timeout or self._http.timeout + (block_ms or 0) / 1000,
        )
        return cast(PolledWork, polled) if polled else None

    def stop(self, environment_id: str, work_id: str, params: Any = None, **kwargs: Any) -> None:
        """``POST .../stop``: graceful by default, ``{"force": True}`` to stop at once (204)."""
        super().stop(environment_id, work_id, params if params is not None else {}, **kwargs)


class AsyncWorkQueue(gen.AsyncEnvironmentsWork):
    """Async ``client.environments.work``: ``poll`` returns ``None`` for an empty queue."""

    async def create(self, environment_id: str, params: Any = None, **kwargs: Any) -> Any:
        return await super().create(environment_id, params if params is not None else _HEALTHCHECK, **kwargs)

    async def poll(  # type: ignore[override]
        self,
        environment_id: str,
        *,
        block_ms: int | None = None,
        reclaim_older_than_ms: int | None = None,
        worker_id: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> PolledWork | None:
        polled = await super().poll(
            environment_id,
            block_ms=block_ms,
            reclaim_older_than_ms=reclaim_older_than_ms,
            worker_id=worker_id,
            extra_query=extra_query,
            timeout=timeout or self._http.timeout + (block_ms or 0) / 1000,
        )
        return cast(PolledWork, polled) if polled else None

    async def stop(self, environment_id: str, work_id: str, params: Any = None, **kwargs: Any) -> None:
        await super().stop(environment_id, work_id, params if params is not None else {}, **kwargs)


class Environments(gen.Environments):
    work: WorkQueue

    def __init__(self, http: Any) -> None:
        super().__init__(http)
        self.work = WorkQueue(http)


class AsyncEnvironments(gen.AsyncEnvironments):
    work: AsyncWorkQueue

    def __init__(self, http: Any) -> None:
        super().__init__(http)
        self.work = AsyncWorkQueue(http)


class Agents(gen.Agents):
    def list_versions(self, agent_id: str, **params: Any) -> Paginator[Any]:
        """Alias of ``agents.versions.list`` (kept for earlier callers)."""
        return self.versions.list(agent_id, **params)


class AsyncAgents(gen.AsyncAgents):
    def list_versions(self, agent_id: str, **params: Any) -> AsyncPaginator[Any]:
        return self.versions.list(agent_id, **params)
