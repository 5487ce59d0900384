"""Generated from openapi.yaml by tools/sdk/generate-resources.js (tools/sdk/generate.sh). Do not edit.

Every operation is a method of the resource its operationId names, e.g. ``environments.work.poll``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, cast

from .._base import AsyncBinaryResponse, AsyncResource, BinaryResponse, StreamEvent, SyncResource, seg
from .._core import AsyncHttpClient, FileInput, HttpClient, Query
from ..pagination import AsyncPaginator, Paginator
from . import models as m

__all__ = ["AsyncResources", "Resources"]


class AgentsVersions(SyncResource):
    """``client.agents.versions``"""

    def list(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Agent]:
        """``GET /v1/agents/{agent_id}/versions``: List an Agent's versions"""
        return self._list(
            "GET",
            f"/v1/agents/{seg(agent_id)}/versions",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )


class Agents(SyncResource):
    """``client.agents``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.versions = AgentsVersions(http)

    def archive(
        self, agent_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Agent:
        """``POST /v1/agents/{agent_id}/archive``: Archive an Agent"""
        return cast(
            "m.Agent",
            self._request(
                "POST",
                f"/v1/agents/{seg(agent_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self, params: m.AgentCreateRequest, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Agent:
        """``POST /v1/agents``: Create an Agent"""
        return cast(
            "m.Agent",
            self._request(
                "POST",
                f"/v1/agents",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Agent]:
        """``GET /v1/agents``: List Agents"""
        return self._list(
            "GET",
            f"/v1/agents",
            query={
                "limit": limit,
                "page": page,
                "created_at": created_at,
                "include_archived": include_archived,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self,
        agent_id: str,
        *,
        version: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Agent:
        """``GET /v1/agents/{agent_id}``: Get an Agent"""
        return cast(
            "m.Agent",
            self._request(
                "GET",
                f"/v1/agents/{seg(agent_id)}",
                query={"version": version},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        agent_id: str,
        params: m.AgentUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Agent:
        """``POST /v1/agents/{agent_id}``: Update an Agent (new version)"""
        return cast(
            "m.Agent",
            self._request(
                "POST",
                f"/v1/agents/{seg(agent_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AuditLog(SyncResource):
    """``client.audit_log``"""

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        actor_id: str | None = None,
        resource_id: str | None = None,
        operation: str | None = None,
        outcome: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.AuditEntry]:
        """``GET /v1/audit_log``: List the audit log (Mango addition)"""
        return self._list(
            "GET",
            f"/v1/audit_log",
            query={
                "limit": limit,
                "page": page,
                "created_at": created_at,
                "actor_id": actor_id,
                "resource_id": resource_id,
                "operation": operation,
                "outcome": outcome,
            },
            extra_query=extra_query,
            timeout=timeout,
        )


class DeploymentRuns(SyncResource):
    """``client.deployment_runs``"""

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        deployment_id: str | None = None,
        has_error: bool | None = None,
        trigger_type: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.DeploymentRun]:
        """``GET /v1/deployment_runs``: List Deployment runs"""
        return self._list(
            "GET",
            f"/v1/deployment_runs",
            query={
                "limit": limit,
                "page": page,
                "deployment_id": deployment_id,
                "has_error": has_error,
                "trigger_type": trigger_type,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, deployment_run_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.DeploymentRun:
        """``GET /v1/deployment_runs/{deployment_run_id}``: Get a Deployment run"""
        return cast(
            "m.DeploymentRun",
            self._request(
                "GET",
                f"/v1/deployment_runs/{seg(deployment_run_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class Deployments(SyncResource):
    """``client.deployments``"""

    def archive(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}/archive``: Archive a Deployment"""
        return cast(
            "m.Deployment",
            self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self,
        params: m.DeploymentCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Deployment:
        """``POST /v1/deployments``: Create a Deployment"""
        return cast(
            "m.Deployment",
            self._request(
                "POST",
                f"/v1/deployments",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        include_archived: bool | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Deployment]:
        """``GET /v1/deployments``: List Deployments"""
        return self._list(
            "GET",
            f"/v1/deployments",
            query={
                "limit": limit,
                "page": page,
                "agent_id": agent_id,
                "status": status,
                "include_archived": include_archived,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    def pause(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}/pause``: Pause a Deployment"""
        return cast(
            "m.Deployment",
            self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/pause",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def retrieve(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``GET /v1/deployments/{deployment_id}``: Get a Deployment"""
        return cast(
            "m.Deployment",
            self._request(
                "GET",
                f"/v1/deployments/{seg(deployment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def run(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.DeploymentRun:
        """``POST /v1/deployments/{deployment_id}/run``: Run a Deployment now"""
        return cast(
            "m.DeploymentRun",
            self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/run",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def unpause(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}/unpause``: Unpause a Deployment"""
        return cast(
            "m.Deployment",
            self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/unpause",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        deployment_id: str,
        params: m.DeploymentUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}``: Update a Deployment"""
        return cast(
            "m.Deployment",
            self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class EnvironmentsWork(SyncResource):
    """``client.environments.work``"""

    def ack(
        self,
        environment_id: str,
        work_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}/ack``: Acknowledge a polled Work item"""
        return cast(
            "m.RedactedWork",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/ack",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self,
        environment_id: str,
        params: m.WorkCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work``: Create a healthcheck Work item"""
        return cast(
            "m.RedactedWork",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def fail(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkFailRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}/fail``: Fail Session Work on a permanent input error"""
        return cast(
            "m.RedactedWork",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/fail",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def heartbeat(
        self,
        environment_id: str,
        work_id: str,
        *,
        expected_last_heartbeat: str,
        desired_ttl_seconds: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WorkHeartbeat:
        """``POST /v1/environments/{environment_id}/work/{work_id}/heartbeat``: Renew a Work lease"""
        return cast(
            "m.WorkHeartbeat",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/heartbeat",
                query={
                    "expected_last_heartbeat": expected_last_heartbeat,
                    "desired_ttl_seconds": desired_ttl_seconds,
                },
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        environment_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.RedactedWork]:
        """``GET /v1/environments/{environment_id}/work``: List Work items"""
        return self._list(
            "GET",
            f"/v1/environments/{seg(environment_id)}/work",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def poll(
        self,
        environment_id: str,
        *,
        block_ms: int | None = None,
        reclaim_older_than_ms: int | None = None,
        worker_id: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WorkPollResponse:
        """``GET /v1/environments/{environment_id}/work/poll``: Poll for Work"""
        return cast(
            "m.WorkPollResponse",
            self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}/work/poll",
                query={
                    "block_ms": block_ms,
                    "reclaim_older_than_ms": reclaim_older_than_ms,
                    "worker_id": worker_id,
                },
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def result(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkResultRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}/result``: Report a healthcheck result"""
        return cast(
            "m.RedactedWork",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/result",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def retrieve(
        self,
        environment_id: str,
        work_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``GET /v1/environments/{environment_id}/work/{work_id}``: Get a Work item"""
        return cast(
            "m.RedactedWork",
            self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def stats(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.WorkQueueStats:
        """``GET /v1/environments/{environment_id}/work/stats``: Get Work queue statistics"""
        return cast(
            "m.WorkQueueStats",
            self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}/work/stats",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def stop(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkStopRequest | None = None,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> None:
        """``POST /v1/environments/{environment_id}/work/{work_id}/stop``: Stop a Work item"""
        self._request(
            "POST",
            f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/stop",
            query={},
            extra_query=extra_query,
            timeout=timeout,
            body=params if params is not None else {},
            parts=None,
        )

    def update(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}``: Update a Work item's metadata"""
        return cast(
            "m.RedactedWork",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class Environments(SyncResource):
    """``client.environments``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.work = EnvironmentsWork(http)

    def archive(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Environment:
        """``POST /v1/environments/{environment_id}/archive``: Archive an Environment"""
        return cast(
            "m.Environment",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self,
        params: m.EnvironmentCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Environment:
        """``POST /v1/environments``: Create an Environment"""
        return cast(
            "m.Environment",
            self._request(
                "POST",
                f"/v1/environments",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.EnvironmentDeleted:
        """``DELETE /v1/environments/{environment_id}``: Delete an Environment"""
        return cast(
            "m.EnvironmentDeleted",
            self._request(
                "DELETE",
                f"/v1/environments/{seg(environment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Environment]:
        """``GET /v1/environments``: List Environments"""
        return self._list(
            "GET",
            f"/v1/environments",
            query={"limit": limit, "page": page, "include_archived": include_archived},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Environment:
        """``GET /v1/environments/{environment_id}``: Get an Environment"""
        return cast(
            "m.Environment",
            self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        environment_id: str,
        params: m.EnvironmentUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Environment:
        """``POST /v1/environments/{environment_id}``: Update an Environment"""
        return cast(
            "m.Environment",
            self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class Files(SyncResource):
    """``client.files``"""

    def content(
        self, file_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> BinaryResponse:
        """``GET /v1/files/{file_id}/content``: Download a File's bytes"""
        return self._download(
            "GET", f"/v1/files/{seg(file_id)}/content", query={}, extra_query=extra_query, timeout=timeout
        )

    def delete(
        self, file_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.FileDeleted:
        """``DELETE /v1/files/{file_id}``: Delete a File"""
        return cast(
            "m.FileDeleted",
            self._request(
                "DELETE",
                f"/v1/files/{seg(file_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.File]:
        """``GET /v1/files``: List Files"""
        return self._list(
            "GET",
            f"/v1/files",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, file_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.File:
        """``GET /v1/files/{file_id}``: Get a File's metadata"""
        return cast(
            "m.File",
            self._request(
                "GET",
                f"/v1/files/{seg(file_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def upload(
        self, *, file: FileInput, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.File:
        """``POST /v1/files``: Upload a File"""
        return cast(
            "m.File",
            self._request(
                "POST",
                f"/v1/files",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=[("file", file, True)],
            ),
        )


class Health(SyncResource):
    """``client.health``"""

    def liveness(self, *, extra_query: Query | None = None, timeout: float | None = None) -> m.HealthStatus:
        """``GET /healthz``: Liveness probe"""
        return cast(
            "m.HealthStatus",
            self._request(
                "GET", f"/healthz", query={}, extra_query=extra_query, timeout=timeout, body=None, parts=None
            ),
        )

    def readiness(self, *, extra_query: Query | None = None, timeout: float | None = None) -> dict[str, Any]:
        """``GET /readyz``: Readiness probe"""
        return cast(
            "dict[str, Any]",
            self._request(
                "GET",
                f"/readyz",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
                accept=(503,),
            ),
        )


class MemoryStoresMemories(SyncResource):
    """``client.memory_stores.memories``"""

    def create(
        self,
        memory_store_id: str,
        params: m.MemoryCreateRequest,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Memory:
        """``POST /v1/memory_stores/{memory_store_id}/memories``: Create a Memory at a path"""
        return cast(
            "m.Memory",
            self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self,
        memory_store_id: str,
        memory_id: str,
        *,
        expected_content_sha256: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryDeleted:
        """``DELETE /v1/memory_stores/{memory_store_id}/memories/{memory_id}``: Delete a Memory"""
        return cast(
            "m.MemoryDeleted",
            self._request(
                "DELETE",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories/{seg(memory_id)}",
                query={"expected_content_sha256": expected_content_sha256},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        memory_store_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        path_prefix: str | None = None,
        depth: int | None = None,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[dict[str, Any]]:
        """``GET /v1/memory_stores/{memory_store_id}/memories``: List Memories"""
        return self._list(
            "GET",
            f"/v1/memory_stores/{seg(memory_store_id)}/memories",
            query={"limit": limit, "page": page, "path_prefix": path_prefix, "depth": depth, "view": view},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self,
        memory_store_id: str,
        memory_id: str,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Memory:
        """``GET /v1/memory_stores/{memory_store_id}/memories/{memory_id}``: Get a Memory"""
        return cast(
            "m.Memory",
            self._request(
                "GET",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories/{seg(memory_id)}",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        memory_store_id: str,
        memory_id: str,
        params: m.MemoryUpdateRequest,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Memory:
        """``POST /v1/memory_stores/{memory_store_id}/memories/{memory_id}``: Update a Memory's content and/or path"""
        return cast(
            "m.Memory",
            self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories/{seg(memory_id)}",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class MemoryStoresMemoryVersions(SyncResource):
    """``client.memory_stores.memory_versions``"""

    def list(
        self,
        memory_store_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        memory_id: str | None = None,
        operation: str | None = None,
        session_id: str | None = None,
        api_key_id: str | None = None,
        service_account_id: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.MemoryVersion]:
        """``GET /v1/memory_stores/{memory_store_id}/memory_versions``: List Memory versions"""
        return self._list(
            "GET",
            f"/v1/memory_stores/{seg(memory_store_id)}/memory_versions",
            query={
                "limit": limit,
                "page": page,
                "memory_id": memory_id,
                "operation": operation,
                "session_id": session_id,
                "api_key_id": api_key_id,
                "service_account_id": service_account_id,
                "created_at": created_at,
                "view": view,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    def redact(
        self,
        memory_store_id: str,
        memory_version_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryVersion:
        """``POST /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}/redact``: Redact a Memory version"""
        return cast(
            "m.MemoryVersion",
            self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/memory_versions/{seg(memory_version_id)}/redact",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def retrieve(
        self,
        memory_store_id: str,
        memory_version_id: str,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryVersion:
        """``GET /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}``: Get a Memory version"""
        return cast(
            "m.MemoryVersion",
            self._request(
                "GET",
                f"/v1/memory_stores/{seg(memory_store_id)}/memory_versions/{seg(memory_version_id)}",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class MemoryStores(SyncResource):
    """``client.memory_stores``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.memories = MemoryStoresMemories(http)
        self.memory_versions = MemoryStoresMemoryVersions(http)

    def archive(
        self, memory_store_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.MemoryStore:
        """``POST /v1/memory_stores/{memory_store_id}/archive``: Archive a Memory Store"""
        return cast(
            "m.MemoryStore",
            self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self,
        params: m.MemoryStoreCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryStore:
        """``POST /v1/memory_stores``: Create a Memory Store"""
        return cast(
            "m.MemoryStore",
            self._request(
                "POST",
                f"/v1/memory_stores",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self, memory_store_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.MemoryStoreDeleted:
        """``DELETE /v1/memory_stores/{memory_store_id}``: Delete a Memory Store"""
        return cast(
            "m.MemoryStoreDeleted",
            self._request(
                "DELETE",
                f"/v1/memory_stores/{seg(memory_store_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.MemoryStore]:
        """``GET /v1/memory_stores``: List Memory Stores"""
        return self._list(
            "GET",
            f"/v1/memory_stores",
            query={
                "limit": limit,
                "page": page,
                "include_archived": include_archived,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, memory_store_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.MemoryStore:
        """``GET /v1/memory_stores/{memory_store_id}``: Get a Memory Store"""
        return cast(
            "m.MemoryStore",
            self._request(
                "GET",
                f"/v1/memory_stores/{seg(memory_store_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        memory_store_id: str,
        params: m.MemoryStoreUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryStore:
        """``POST /v1/memory_stores/{memory_store_id}``: Update a Memory Store"""
        return cast(
            "m.MemoryStore",
            self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class SessionsEvents(SyncResource):
    """``client.sessions.events``"""

    def list(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        order: str | None = None,
        types: Sequence[str] | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.SessionEvent]:
        """``GET /v1/sessions/{session_id}/events``: List events"""
        return self._list(
            "GET",
            f"/v1/sessions/{seg(session_id)}/events",
            query={"limit": limit, "page": page, "order": order, "types": types, "created_at": created_at},
            extra_query=extra_query,
            timeout=timeout,
        )

    def send(
        self,
        session_id: str,
        params: m.SessionEventsSendRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/sessions/{session_id}/events``: Send events"""
        return cast(
            "dict[str, Any]",
            self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}/events",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def stream(
        self,
        session_id: str,
        *,
        event_deltas: Sequence[str] | None = None,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Iterator[StreamEvent]:
        """``GET /v1/sessions/{session_id}/events/stream``: Stream events (SSE)"""
        return self._stream(
            f"/v1/sessions/{seg(session_id)}/events/stream",
            query={"event_deltas": event_deltas},
            extra_query=extra_query,
            timeout=timeout,
            last_event_id=last_event_id,
            max_retries=max_retries,
        )


class SessionsThreadsEvents(SyncResource):
    """``client.sessions.threads.events``"""

    def list(
        self,
        session_id: str,
        thread_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        order: str | None = None,
        types: Sequence[str] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.SessionEvent]:
        """``GET /v1/sessions/{session_id}/threads/{thread_id}/events``: List a Thread's events"""
        return self._list(
            "GET",
            f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}/events",
            query={"limit": limit, "page": page, "order": order, "types": types},
            extra_query=extra_query,
            timeout=timeout,
        )


class SessionsThreads(SyncResource):
    """``client.sessions.threads``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.events = SessionsThreadsEvents(http)

    def archive(
        self,
        session_id: str,
        thread_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.SessionThread:
        """``POST /v1/sessions/{session_id}/threads/{thread_id}/archive``: Archive a Thread"""
        return cast(
            "m.SessionThread",
            self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def get(
        self,
        session_id: str,
        thread_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.SessionThread:
        """``GET /v1/sessions/{session_id}/threads/{thread_id}``: Get a Thread"""
        return cast(
            "m.SessionThread",
            self._request(
                "GET",
                f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.SessionThread]:
        """``GET /v1/sessions/{session_id}/threads``: List a Session's Threads"""
        return self._list(
            "GET",
            f"/v1/sessions/{seg(session_id)}/threads",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def stream(
        self,
        session_id: str,
        thread_id: str,
        *,
        event_deltas: Sequence[str] | None = None,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Iterator[StreamEvent]:
        """``GET /v1/sessions/{session_id}/threads/{thread_id}/stream``: Stream a Thread's events (SSE)"""
        return self._stream(
            f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}/stream",
            query={"event_deltas": event_deltas},
            extra_query=extra_query,
            timeout=timeout,
            last_event_id=last_event_id,
            max_retries=max_retries,
        )


class Sessions(SyncResource):
    """``client.sessions``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.events = SessionsEvents(http)
        self.threads = SessionsThreads(http)

    def archive(
        self, session_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Session:
        """``POST /v1/sessions/{session_id}/archive``: Archive a Session"""
        return cast(
            "m.Session",
            self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self,
        params: m.SessionCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Session:
        """``POST /v1/sessions``: Create a Session"""
        return cast(
            "m.Session",
            self._request(
                "POST",
                f"/v1/sessions",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self, session_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SessionDeleted:
        """``DELETE /v1/sessions/{session_id}``: Delete a Session"""
        return cast(
            "m.SessionDeleted",
            self._request(
                "DELETE",
                f"/v1/sessions/{seg(session_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        order: str | None = None,
        agent_id: str | None = None,
        agent_version: int | None = None,
        deployment_id: str | None = None,
        statuses: Sequence[str] | None = None,
        include_archived: bool | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Session]:
        """``GET /v1/sessions``: List Sessions"""
        return self._list(
            "GET",
            f"/v1/sessions",
            query={
                "limit": limit,
                "page": page,
                "order": order,
                "agent_id": agent_id,
                "agent_version": agent_version,
                "deployment_id": deployment_id,
                "statuses": statuses,
                "include_archived": include_archived,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, session_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Session:
        """``GET /v1/sessions/{session_id}``: Get a Session"""
        return cast(
            "m.Session",
            self._request(
                "GET",
                f"/v1/sessions/{seg(session_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        session_id: str,
        params: m.SessionUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Session:
        """``POST /v1/sessions/{session_id}``: Update a Session"""
        return cast(
            "m.Session",
            self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class SkillsVersions(SyncResource):
    """``client.skills.versions``"""

    def content(
        self, skill_id: str, version: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> BinaryResponse:
        """``GET /v1/skills/{skill_id}/versions/{version}/content``: Download a Skill version's archive"""
        return self._download(
            "GET",
            f"/v1/skills/{seg(skill_id)}/versions/{seg(version)}/content",
            query={},
            extra_query=extra_query,
            timeout=timeout,
        )

    def create(
        self,
        skill_id: str,
        *,
        files: Sequence[FileInput],
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.SkillVersion:
        """``POST /v1/skills/{skill_id}/versions``: Create a Skill version"""
        return cast(
            "m.SkillVersion",
            self._request(
                "POST",
                f"/v1/skills/{seg(skill_id)}/versions",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=[("files[]", files, True)],
            ),
        )

    def delete(
        self, skill_id: str, version: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SkillVersionDeleted:
        """``DELETE /v1/skills/{skill_id}/versions/{version}``: Delete a Skill version"""
        return cast(
            "m.SkillVersionDeleted",
            self._request(
                "DELETE",
                f"/v1/skills/{seg(skill_id)}/versions/{seg(version)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        skill_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.SkillVersion]:
        """``GET /v1/skills/{skill_id}/versions``: List a Skill's versions"""
        return self._list(
            "GET",
            f"/v1/skills/{seg(skill_id)}/versions",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, skill_id: str, version: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SkillVersion:
        """``GET /v1/skills/{skill_id}/versions/{version}``: Get a Skill version"""
        return cast(
            "m.SkillVersion",
            self._request(
                "GET",
                f"/v1/skills/{seg(skill_id)}/versions/{seg(version)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class Skills(SyncResource):
    """``client.skills``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.versions = SkillsVersions(http)

    def create(
        self,
        *,
        files: Sequence[FileInput],
        display_title: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Skill:
        """``POST /v1/skills``: Create a Skill (with its first version)"""
        return cast(
            "m.Skill",
            self._request(
                "POST",
                f"/v1/skills",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=[("files[]", files, True), ("display_title", display_title, False)],
            ),
        )

    def delete(
        self, skill_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SkillDeleted:
        """``DELETE /v1/skills/{skill_id}``: Delete a Skill and all its versions"""
        return cast(
            "m.SkillDeleted",
            self._request(
                "DELETE",
                f"/v1/skills/{seg(skill_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        source: Any | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Skill]:
        """``GET /v1/skills``: List Skills"""
        return self._list(
            "GET",
            f"/v1/skills",
            query={"limit": limit, "page": page, "source": source},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, skill_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Skill:
        """``GET /v1/skills/{skill_id}``: Get a Skill"""
        return cast(
            "m.Skill",
            self._request(
                "GET",
                f"/v1/skills/{seg(skill_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class VaultsCredentials(SyncResource):
    """``client.vaults.credentials``"""

    def archive(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``POST /v1/vaults/{vault_id}/credentials/{credential_id}/archive``: Archive a Vault credential"""
        return cast(
            "m.VaultCredential",
            self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self,
        vault_id: str,
        params: m.VaultCredentialCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``POST /v1/vaults/{vault_id}/credentials``: Create a Vault credential"""
        return cast(
            "m.VaultCredential",
            self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredentialDeleted:
        """``DELETE /v1/vaults/{vault_id}/credentials/{credential_id}``: Delete a Vault credential"""
        return cast(
            "m.VaultCredentialDeleted",
            self._request(
                "DELETE",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        vault_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.VaultCredential]:
        """``GET /v1/vaults/{vault_id}/credentials``: List a Vault's credentials"""
        return self._list(
            "GET",
            f"/v1/vaults/{seg(vault_id)}/credentials",
            query={"limit": limit, "page": page, "include_archived": include_archived},
            extra_query=extra_query,
            timeout=timeout,
        )

    def mcp_oauth_validate(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredentialValidation:
        """``POST /v1/vaults/{vault_id}/credentials/{credential_id}/mcp_oauth_validate``: Live-probe an mcp_oauth credential"""
        return cast(
            "m.VaultCredentialValidation",
            self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}/mcp_oauth_validate",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def retrieve(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``GET /v1/vaults/{vault_id}/credentials/{credential_id}``: Get a Vault credential"""
        return cast(
            "m.VaultCredential",
            self._request(
                "GET",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        vault_id: str,
        credential_id: str,
        params: m.VaultCredentialUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``POST /v1/vaults/{vault_id}/credentials/{credential_id}``: Update a Vault credential"""
        return cast(
            "m.VaultCredential",
            self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class Vaults(SyncResource):
    """``client.vaults``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.credentials = VaultsCredentials(http)

    def archive(
        self, vault_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Vault:
        """``POST /v1/vaults/{vault_id}/archive``: Archive a Vault"""
        return cast(
            "m.Vault",
            self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def create(
        self, params: m.VaultCreateRequest, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Vault:
        """``POST /v1/vaults``: Create a Vault"""
        return cast(
            "m.Vault",
            self._request(
                "POST",
                f"/v1/vaults",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self, vault_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.VaultDeleted:
        """``DELETE /v1/vaults/{vault_id}``: Delete a Vault"""
        return cast(
            "m.VaultDeleted",
            self._request(
                "DELETE",
                f"/v1/vaults/{seg(vault_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Vault]:
        """``GET /v1/vaults``: List Vaults"""
        return self._list(
            "GET",
            f"/v1/vaults",
            query={"limit": limit, "page": page, "include_archived": include_archived},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, vault_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Vault:
        """``GET /v1/vaults/{vault_id}``: Get a Vault"""
        return cast(
            "m.Vault",
            self._request(
                "GET",
                f"/v1/vaults/{seg(vault_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def update(
        self,
        vault_id: str,
        params: m.VaultUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Vault:
        """``POST /v1/vaults/{vault_id}``: Update a Vault"""
        return cast(
            "m.Vault",
            self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class WebhooksDeliveries(SyncResource):
    """``client.webhooks.deliveries``"""

    def list(
        self,
        webhook_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.WebhookDelivery]:
        """``GET /v1/webhooks/{webhook_id}/deliveries``: The delivery log of an endpoint (Mango addition)"""
        return self._list(
            "GET",
            f"/v1/webhooks/{seg(webhook_id)}/deliveries",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def redeliver(
        self,
        webhook_id: str,
        delivery_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WebhookDelivery:
        """``POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver``: Send an event to the endpoint again (Mango addition)"""
        return cast(
            "m.WebhookDelivery",
            self._request(
                "POST",
                f"/v1/webhooks/{seg(webhook_id)}/deliveries/{seg(delivery_id)}/redeliver",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class Webhooks(SyncResource):
    """``client.webhooks``"""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.deliveries = WebhooksDeliveries(http)

    def create(
        self,
        params: m.WebhookCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WebhookWithSecret:
        """``POST /v1/webhooks``: Register a webhook endpoint (Mango addition)"""
        return cast(
            "m.WebhookWithSecret",
            self._request(
                "POST",
                f"/v1/webhooks",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def delete(
        self, webhook_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.WebhookDeleted:
        """``DELETE /v1/webhooks/{webhook_id}``: Delete a webhook endpoint (Mango addition)"""
        return cast(
            "m.WebhookDeleted",
            self._request(
                "DELETE",
                f"/v1/webhooks/{seg(webhook_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> Paginator[m.Webhook]:
        """``GET /v1/webhooks``: List webhook endpoints (Mango addition)"""
        return self._list(
            "GET",
            f"/v1/webhooks",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def retrieve(
        self, webhook_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Webhook:
        """``GET /v1/webhooks/{webhook_id}``: Get a webhook endpoint (Mango addition)"""
        return cast(
            "m.Webhook",
            self._request(
                "GET",
                f"/v1/webhooks/{seg(webhook_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def rotate_secret(
        self,
        webhook_id: str,
        params: m.WebhookRotateSecretRequest | None = None,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WebhookRotatedSecret:
        """``POST /v1/webhooks/{webhook_id}/rotate_secret``: Rotate a webhook's signing secret (Mango addition)"""
        return cast(
            "m.WebhookRotatedSecret",
            self._request(
                "POST",
                f"/v1/webhooks/{seg(webhook_id)}/rotate_secret",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params if params is not None else {},
                parts=None,
            ),
        )

    def update(
        self,
        webhook_id: str,
        params: m.WebhookUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Webhook:
        """``POST /v1/webhooks/{webhook_id}``: Update a webhook endpoint (Mango addition)"""
        return cast(
            "m.Webhook",
            self._request(
                "POST",
                f"/v1/webhooks/{seg(webhook_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class Resources(SyncResource):
    """Every resource of openapi.yaml (the root of the client)."""

    def __init__(self, http: HttpClient) -> None:
        super().__init__(http)
        self.agents = Agents(http)
        self.audit_log = AuditLog(http)
        self.deployment_runs = DeploymentRuns(http)
        self.deployments = Deployments(http)
        self.environments = Environments(http)
        self.files = Files(http)
        self.health = Health(http)
        self.memory_stores = MemoryStores(http)
        self.sessions = Sessions(http)
        self.skills = Skills(http)
        self.vaults = Vaults(http)
        self.webhooks = Webhooks(http)


class AsyncAgentsVersions(AsyncResource):
    """``client.agents.versions``"""

    def list(
        self,
        agent_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Agent]:
        """``GET /v1/agents/{agent_id}/versions``: List an Agent's versions"""
        return self._list(
            "GET",
            f"/v1/agents/{seg(agent_id)}/versions",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )


class AsyncAgents(AsyncResource):
    """``client.agents``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.versions = AsyncAgentsVersions(http)

    async def archive(
        self, agent_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Agent:
        """``POST /v1/agents/{agent_id}/archive``: Archive an Agent"""
        return cast(
            "m.Agent",
            await self._request(
                "POST",
                f"/v1/agents/{seg(agent_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self, params: m.AgentCreateRequest, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Agent:
        """``POST /v1/agents``: Create an Agent"""
        return cast(
            "m.Agent",
            await self._request(
                "POST",
                f"/v1/agents",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Agent]:
        """``GET /v1/agents``: List Agents"""
        return self._list(
            "GET",
            f"/v1/agents",
            query={
                "limit": limit,
                "page": page,
                "created_at": created_at,
                "include_archived": include_archived,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self,
        agent_id: str,
        *,
        version: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Agent:
        """``GET /v1/agents/{agent_id}``: Get an Agent"""
        return cast(
            "m.Agent",
            await self._request(
                "GET",
                f"/v1/agents/{seg(agent_id)}",
                query={"version": version},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        agent_id: str,
        params: m.AgentUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Agent:
        """``POST /v1/agents/{agent_id}``: Update an Agent (new version)"""
        return cast(
            "m.Agent",
            await self._request(
                "POST",
                f"/v1/agents/{seg(agent_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncAuditLog(AsyncResource):
    """``client.audit_log``"""

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        actor_id: str | None = None,
        resource_id: str | None = None,
        operation: str | None = None,
        outcome: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.AuditEntry]:
        """``GET /v1/audit_log``: List the audit log (Mango addition)"""
        return self._list(
            "GET",
            f"/v1/audit_log",
            query={
                "limit": limit,
                "page": page,
                "created_at": created_at,
                "actor_id": actor_id,
                "resource_id": resource_id,
                "operation": operation,
                "outcome": outcome,
            },
            extra_query=extra_query,
            timeout=timeout,
        )


class AsyncDeploymentRuns(AsyncResource):
    """``client.deployment_runs``"""

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        deployment_id: str | None = None,
        has_error: bool | None = None,
        trigger_type: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.DeploymentRun]:
        """``GET /v1/deployment_runs``: List Deployment runs"""
        return self._list(
            "GET",
            f"/v1/deployment_runs",
            query={
                "limit": limit,
                "page": page,
                "deployment_id": deployment_id,
                "has_error": has_error,
                "trigger_type": trigger_type,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, deployment_run_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.DeploymentRun:
        """``GET /v1/deployment_runs/{deployment_run_id}``: Get a Deployment run"""
        return cast(
            "m.DeploymentRun",
            await self._request(
                "GET",
                f"/v1/deployment_runs/{seg(deployment_run_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class AsyncDeployments(AsyncResource):
    """``client.deployments``"""

    async def archive(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}/archive``: Archive a Deployment"""
        return cast(
            "m.Deployment",
            await self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self,
        params: m.DeploymentCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Deployment:
        """``POST /v1/deployments``: Create a Deployment"""
        return cast(
            "m.Deployment",
            await self._request(
                "POST",
                f"/v1/deployments",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        agent_id: str | None = None,
        status: str | None = None,
        include_archived: bool | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Deployment]:
        """``GET /v1/deployments``: List Deployments"""
        return self._list(
            "GET",
            f"/v1/deployments",
            query={
                "limit": limit,
                "page": page,
                "agent_id": agent_id,
                "status": status,
                "include_archived": include_archived,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    async def pause(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}/pause``: Pause a Deployment"""
        return cast(
            "m.Deployment",
            await self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/pause",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def retrieve(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``GET /v1/deployments/{deployment_id}``: Get a Deployment"""
        return cast(
            "m.Deployment",
            await self._request(
                "GET",
                f"/v1/deployments/{seg(deployment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def run(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.DeploymentRun:
        """``POST /v1/deployments/{deployment_id}/run``: Run a Deployment now"""
        return cast(
            "m.DeploymentRun",
            await self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/run",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def unpause(
        self, deployment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}/unpause``: Unpause a Deployment"""
        return cast(
            "m.Deployment",
            await self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}/unpause",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        deployment_id: str,
        params: m.DeploymentUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Deployment:
        """``POST /v1/deployments/{deployment_id}``: Update a Deployment"""
        return cast(
            "m.Deployment",
            await self._request(
                "POST",
                f"/v1/deployments/{seg(deployment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncEnvironmentsWork(AsyncResource):
    """``client.environments.work``"""

    async def ack(
        self,
        environment_id: str,
        work_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}/ack``: Acknowledge a polled Work item"""
        return cast(
            "m.RedactedWork",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/ack",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self,
        environment_id: str,
        params: m.WorkCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work``: Create a healthcheck Work item"""
        return cast(
            "m.RedactedWork",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def fail(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkFailRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}/fail``: Fail Session Work on a permanent input error"""
        return cast(
            "m.RedactedWork",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/fail",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def heartbeat(
        self,
        environment_id: str,
        work_id: str,
        *,
        expected_last_heartbeat: str,
        desired_ttl_seconds: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WorkHeartbeat:
        """``POST /v1/environments/{environment_id}/work/{work_id}/heartbeat``: Renew a Work lease"""
        return cast(
            "m.WorkHeartbeat",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/heartbeat",
                query={
                    "expected_last_heartbeat": expected_last_heartbeat,
                    "desired_ttl_seconds": desired_ttl_seconds,
                },
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        environment_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.RedactedWork]:
        """``GET /v1/environments/{environment_id}/work``: List Work items"""
        return self._list(
            "GET",
            f"/v1/environments/{seg(environment_id)}/work",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def poll(
        self,
        environment_id: str,
        *,
        block_ms: int | None = None,
        reclaim_older_than_ms: int | None = None,
        worker_id: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WorkPollResponse:
        """``GET /v1/environments/{environment_id}/work/poll``: Poll for Work"""
        return cast(
            "m.WorkPollResponse",
            await self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}/work/poll",
                query={
                    "block_ms": block_ms,
                    "reclaim_older_than_ms": reclaim_older_than_ms,
                    "worker_id": worker_id,
                },
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def result(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkResultRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}/result``: Report a healthcheck result"""
        return cast(
            "m.RedactedWork",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/result",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def retrieve(
        self,
        environment_id: str,
        work_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``GET /v1/environments/{environment_id}/work/{work_id}``: Get a Work item"""
        return cast(
            "m.RedactedWork",
            await self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def stats(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.WorkQueueStats:
        """``GET /v1/environments/{environment_id}/work/stats``: Get Work queue statistics"""
        return cast(
            "m.WorkQueueStats",
            await self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}/work/stats",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def stop(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkStopRequest | None = None,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> None:
        """``POST /v1/environments/{environment_id}/work/{work_id}/stop``: Stop a Work item"""
        await self._request(
            "POST",
            f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}/stop",
            query={},
            extra_query=extra_query,
            timeout=timeout,
            body=params if params is not None else {},
            parts=None,
        )

    async def update(
        self,
        environment_id: str,
        work_id: str,
        params: m.WorkUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.RedactedWork:
        """``POST /v1/environments/{environment_id}/work/{work_id}``: Update a Work item's metadata"""
        return cast(
            "m.RedactedWork",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/work/{seg(work_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncEnvironments(AsyncResource):
    """``client.environments``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.work = AsyncEnvironmentsWork(http)

    async def archive(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Environment:
        """``POST /v1/environments/{environment_id}/archive``: Archive an Environment"""
        return cast(
            "m.Environment",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self,
        params: m.EnvironmentCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Environment:
        """``POST /v1/environments``: Create an Environment"""
        return cast(
            "m.Environment",
            await self._request(
                "POST",
                f"/v1/environments",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.EnvironmentDeleted:
        """``DELETE /v1/environments/{environment_id}``: Delete an Environment"""
        return cast(
            "m.EnvironmentDeleted",
            await self._request(
                "DELETE",
                f"/v1/environments/{seg(environment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Environment]:
        """``GET /v1/environments``: List Environments"""
        return self._list(
            "GET",
            f"/v1/environments",
            query={"limit": limit, "page": page, "include_archived": include_archived},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, environment_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Environment:
        """``GET /v1/environments/{environment_id}``: Get an Environment"""
        return cast(
            "m.Environment",
            await self._request(
                "GET",
                f"/v1/environments/{seg(environment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        environment_id: str,
        params: m.EnvironmentUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Environment:
        """``POST /v1/environments/{environment_id}``: Update an Environment"""
        return cast(
            "m.Environment",
            await self._request(
                "POST",
                f"/v1/environments/{seg(environment_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncFiles(AsyncResource):
    """``client.files``"""

    async def content(
        self, file_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> AsyncBinaryResponse:
        """``GET /v1/files/{file_id}/content``: Download a File's bytes"""
        return await self._download(
            "GET", f"/v1/files/{seg(file_id)}/content", query={}, extra_query=extra_query, timeout=timeout
        )

    async def delete(
        self, file_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.FileDeleted:
        """``DELETE /v1/files/{file_id}``: Delete a File"""
        return cast(
            "m.FileDeleted",
            await self._request(
                "DELETE",
                f"/v1/files/{seg(file_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.File]:
        """``GET /v1/files``: List Files"""
        return self._list(
            "GET",
            f"/v1/files",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, file_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.File:
        """``GET /v1/files/{file_id}``: Get a File's metadata"""
        return cast(
            "m.File",
            await self._request(
                "GET",
                f"/v1/files/{seg(file_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def upload(
        self, *, file: FileInput, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.File:
        """``POST /v1/files``: Upload a File"""
        return cast(
            "m.File",
            await self._request(
                "POST",
                f"/v1/files",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=[("file", file, True)],
            ),
        )


class AsyncHealth(AsyncResource):
    """``client.health``"""

    async def liveness(
        self, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.HealthStatus:
        """``GET /healthz``: Liveness probe"""
        return cast(
            "m.HealthStatus",
            await self._request(
                "GET", f"/healthz", query={}, extra_query=extra_query, timeout=timeout, body=None, parts=None
            ),
        )

    async def readiness(
        self, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """``GET /readyz``: Readiness probe"""
        return cast(
            "dict[str, Any]",
            await self._request(
                "GET",
                f"/readyz",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
                accept=(503,),
            ),
        )


class AsyncMemoryStoresMemories(AsyncResource):
    """``client.memory_stores.memories``"""

    async def create(
        self,
        memory_store_id: str,
        params: m.MemoryCreateRequest,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Memory:
        """``POST /v1/memory_stores/{memory_store_id}/memories``: Create a Memory at a path"""
        return cast(
            "m.Memory",
            await self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self,
        memory_store_id: str,
        memory_id: str,
        *,
        expected_content_sha256: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryDeleted:
        """``DELETE /v1/memory_stores/{memory_store_id}/memories/{memory_id}``: Delete a Memory"""
        return cast(
            "m.MemoryDeleted",
            await self._request(
                "DELETE",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories/{seg(memory_id)}",
                query={"expected_content_sha256": expected_content_sha256},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        memory_store_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        path_prefix: str | None = None,
        depth: int | None = None,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[dict[str, Any]]:
        """``GET /v1/memory_stores/{memory_store_id}/memories``: List Memories"""
        return self._list(
            "GET",
            f"/v1/memory_stores/{seg(memory_store_id)}/memories",
            query={"limit": limit, "page": page, "path_prefix": path_prefix, "depth": depth, "view": view},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self,
        memory_store_id: str,
        memory_id: str,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Memory:
        """``GET /v1/memory_stores/{memory_store_id}/memories/{memory_id}``: Get a Memory"""
        return cast(
            "m.Memory",
            await self._request(
                "GET",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories/{seg(memory_id)}",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        memory_store_id: str,
        memory_id: str,
        params: m.MemoryUpdateRequest,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Memory:
        """``POST /v1/memory_stores/{memory_store_id}/memories/{memory_id}``: Update a Memory's content and/or path"""
        return cast(
            "m.Memory",
            await self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/memories/{seg(memory_id)}",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncMemoryStoresMemoryVersions(AsyncResource):
    """``client.memory_stores.memory_versions``"""

    def list(
        self,
        memory_store_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        memory_id: str | None = None,
        operation: str | None = None,
        session_id: str | None = None,
        api_key_id: str | None = None,
        service_account_id: str | None = None,
        created_at: Mapping[str, Any] | None = None,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.MemoryVersion]:
        """``GET /v1/memory_stores/{memory_store_id}/memory_versions``: List Memory versions"""
        return self._list(
            "GET",
            f"/v1/memory_stores/{seg(memory_store_id)}/memory_versions",
            query={
                "limit": limit,
                "page": page,
                "memory_id": memory_id,
                "operation": operation,
                "session_id": session_id,
                "api_key_id": api_key_id,
                "service_account_id": service_account_id,
                "created_at": created_at,
                "view": view,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    async def redact(
        self,
        memory_store_id: str,
        memory_version_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryVersion:
        """``POST /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}/redact``: Redact a Memory version"""
        return cast(
            "m.MemoryVersion",
            await self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/memory_versions/{seg(memory_version_id)}/redact",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def retrieve(
        self,
        memory_store_id: str,
        memory_version_id: str,
        *,
        view: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryVersion:
        """``GET /v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}``: Get a Memory version"""
        return cast(
            "m.MemoryVersion",
            await self._request(
                "GET",
                f"/v1/memory_stores/{seg(memory_store_id)}/memory_versions/{seg(memory_version_id)}",
                query={"view": view},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class AsyncMemoryStores(AsyncResource):
    """``client.memory_stores``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.memories = AsyncMemoryStoresMemories(http)
        self.memory_versions = AsyncMemoryStoresMemoryVersions(http)

    async def archive(
        self, memory_store_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.MemoryStore:
        """``POST /v1/memory_stores/{memory_store_id}/archive``: Archive a Memory Store"""
        return cast(
            "m.MemoryStore",
            await self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self,
        params: m.MemoryStoreCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryStore:
        """``POST /v1/memory_stores``: Create a Memory Store"""
        return cast(
            "m.MemoryStore",
            await self._request(
                "POST",
                f"/v1/memory_stores",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self, memory_store_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.MemoryStoreDeleted:
        """``DELETE /v1/memory_stores/{memory_store_id}``: Delete a Memory Store"""
        return cast(
            "m.MemoryStoreDeleted",
            await self._request(
                "DELETE",
                f"/v1/memory_stores/{seg(memory_store_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.MemoryStore]:
        """``GET /v1/memory_stores``: List Memory Stores"""
        return self._list(
            "GET",
            f"/v1/memory_stores",
            query={
                "limit": limit,
                "page": page,
                "include_archived": include_archived,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, memory_store_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.MemoryStore:
        """``GET /v1/memory_stores/{memory_store_id}``: Get a Memory Store"""
        return cast(
            "m.MemoryStore",
            await self._request(
                "GET",
                f"/v1/memory_stores/{seg(memory_store_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        memory_store_id: str,
        params: m.MemoryStoreUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.MemoryStore:
        """``POST /v1/memory_stores/{memory_store_id}``: Update a Memory Store"""
        return cast(
            "m.MemoryStore",
            await self._request(
                "POST",
                f"/v1/memory_stores/{seg(memory_store_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncSessionsEvents(AsyncResource):
    """``client.sessions.events``"""

    def list(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        order: str | None = None,
        types: Sequence[str] | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.SessionEvent]:
        """``GET /v1/sessions/{session_id}/events``: List events"""
        return self._list(
            "GET",
            f"/v1/sessions/{seg(session_id)}/events",
            query={"limit": limit, "page": page, "order": order, "types": types, "created_at": created_at},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def send(
        self,
        session_id: str,
        params: m.SessionEventsSendRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/sessions/{session_id}/events``: Send events"""
        return cast(
            "dict[str, Any]",
            await self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}/events",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    def stream(
        self,
        session_id: str,
        *,
        event_deltas: Sequence[str] | None = None,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """``GET /v1/sessions/{session_id}/events/stream``: Stream events (SSE)"""
        return self._stream(
            f"/v1/sessions/{seg(session_id)}/events/stream",
            query={"event_deltas": event_deltas},
            extra_query=extra_query,
            timeout=timeout,
            last_event_id=last_event_id,
            max_retries=max_retries,
        )


class AsyncSessionsThreadsEvents(AsyncResource):
    """``client.sessions.threads.events``"""

    def list(
        self,
        session_id: str,
        thread_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        order: str | None = None,
        types: Sequence[str] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.SessionEvent]:
        """``GET /v1/sessions/{session_id}/threads/{thread_id}/events``: List a Thread's events"""
        return self._list(
            "GET",
            f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}/events",
            query={"limit": limit, "page": page, "order": order, "types": types},
            extra_query=extra_query,
            timeout=timeout,
        )


class AsyncSessionsThreads(AsyncResource):
    """``client.sessions.threads``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.events = AsyncSessionsThreadsEvents(http)

    async def archive(
        self,
        session_id: str,
        thread_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.SessionThread:
        """``POST /v1/sessions/{session_id}/threads/{thread_id}/archive``: Archive a Thread"""
        return cast(
            "m.SessionThread",
            await self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def get(
        self,
        session_id: str,
        thread_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.SessionThread:
        """``GET /v1/sessions/{session_id}/threads/{thread_id}``: Get a Thread"""
        return cast(
            "m.SessionThread",
            await self._request(
                "GET",
                f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        session_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.SessionThread]:
        """``GET /v1/sessions/{session_id}/threads``: List a Session's Threads"""
        return self._list(
            "GET",
            f"/v1/sessions/{seg(session_id)}/threads",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    def stream(
        self,
        session_id: str,
        thread_id: str,
        *,
        event_deltas: Sequence[str] | None = None,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """``GET /v1/sessions/{session_id}/threads/{thread_id}/stream``: Stream a Thread's events (SSE)"""
        return self._stream(
            f"/v1/sessions/{seg(session_id)}/threads/{seg(thread_id)}/stream",
            query={"event_deltas": event_deltas},
            extra_query=extra_query,
            timeout=timeout,
            last_event_id=last_event_id,
            max_retries=max_retries,
        )


class AsyncSessions(AsyncResource):
    """``client.sessions``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.events = AsyncSessionsEvents(http)
        self.threads = AsyncSessionsThreads(http)

    async def archive(
        self, session_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Session:
        """``POST /v1/sessions/{session_id}/archive``: Archive a Session"""
        return cast(
            "m.Session",
            await self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self,
        params: m.SessionCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Session:
        """``POST /v1/sessions``: Create a Session"""
        return cast(
            "m.Session",
            await self._request(
                "POST",
                f"/v1/sessions",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self, session_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SessionDeleted:
        """``DELETE /v1/sessions/{session_id}``: Delete a Session"""
        return cast(
            "m.SessionDeleted",
            await self._request(
                "DELETE",
                f"/v1/sessions/{seg(session_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        order: str | None = None,
        agent_id: str | None = None,
        agent_version: int | None = None,
        deployment_id: str | None = None,
        statuses: Sequence[str] | None = None,
        include_archived: bool | None = None,
        created_at: Mapping[str, Any] | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Session]:
        """``GET /v1/sessions``: List Sessions"""
        return self._list(
            "GET",
            f"/v1/sessions",
            query={
                "limit": limit,
                "page": page,
                "order": order,
                "agent_id": agent_id,
                "agent_version": agent_version,
                "deployment_id": deployment_id,
                "statuses": statuses,
                "include_archived": include_archived,
                "created_at": created_at,
            },
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, session_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Session:
        """``GET /v1/sessions/{session_id}``: Get a Session"""
        return cast(
            "m.Session",
            await self._request(
                "GET",
                f"/v1/sessions/{seg(session_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        session_id: str,
        params: m.SessionUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Session:
        """``POST /v1/sessions/{session_id}``: Update a Session"""
        return cast(
            "m.Session",
            await self._request(
                "POST",
                f"/v1/sessions/{seg(session_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncSkillsVersions(AsyncResource):
    """``client.skills.versions``"""

    async def content(
        self, skill_id: str, version: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> AsyncBinaryResponse:
        """``GET /v1/skills/{skill_id}/versions/{version}/content``: Download a Skill version's archive"""
        return await self._download(
            "GET",
            f"/v1/skills/{seg(skill_id)}/versions/{seg(version)}/content",
            query={},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def create(
        self,
        skill_id: str,
        *,
        files: Sequence[FileInput],
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.SkillVersion:
        """``POST /v1/skills/{skill_id}/versions``: Create a Skill version"""
        return cast(
            "m.SkillVersion",
            await self._request(
                "POST",
                f"/v1/skills/{seg(skill_id)}/versions",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=[("files[]", files, True)],
            ),
        )

    async def delete(
        self, skill_id: str, version: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SkillVersionDeleted:
        """``DELETE /v1/skills/{skill_id}/versions/{version}``: Delete a Skill version"""
        return cast(
            "m.SkillVersionDeleted",
            await self._request(
                "DELETE",
                f"/v1/skills/{seg(skill_id)}/versions/{seg(version)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        skill_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.SkillVersion]:
        """``GET /v1/skills/{skill_id}/versions``: List a Skill's versions"""
        return self._list(
            "GET",
            f"/v1/skills/{seg(skill_id)}/versions",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, skill_id: str, version: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SkillVersion:
        """``GET /v1/skills/{skill_id}/versions/{version}``: Get a Skill version"""
        return cast(
            "m.SkillVersion",
            await self._request(
                "GET",
                f"/v1/skills/{seg(skill_id)}/versions/{seg(version)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class AsyncSkills(AsyncResource):
    """``client.skills``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.versions = AsyncSkillsVersions(http)

    async def create(
        self,
        *,
        files: Sequence[FileInput],
        display_title: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Skill:
        """``POST /v1/skills``: Create a Skill (with its first version)"""
        return cast(
            "m.Skill",
            await self._request(
                "POST",
                f"/v1/skills",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=[("files[]", files, True), ("display_title", display_title, False)],
            ),
        )

    async def delete(
        self, skill_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.SkillDeleted:
        """``DELETE /v1/skills/{skill_id}``: Delete a Skill and all its versions"""
        return cast(
            "m.SkillDeleted",
            await self._request(
                "DELETE",
                f"/v1/skills/{seg(skill_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        source: Any | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Skill]:
        """``GET /v1/skills``: List Skills"""
        return self._list(
            "GET",
            f"/v1/skills",
            query={"limit": limit, "page": page, "source": source},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, skill_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Skill:
        """``GET /v1/skills/{skill_id}``: Get a Skill"""
        return cast(
            "m.Skill",
            await self._request(
                "GET",
                f"/v1/skills/{seg(skill_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class AsyncVaultsCredentials(AsyncResource):
    """``client.vaults.credentials``"""

    async def archive(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``POST /v1/vaults/{vault_id}/credentials/{credential_id}/archive``: Archive a Vault credential"""
        return cast(
            "m.VaultCredential",
            await self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self,
        vault_id: str,
        params: m.VaultCredentialCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``POST /v1/vaults/{vault_id}/credentials``: Create a Vault credential"""
        return cast(
            "m.VaultCredential",
            await self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredentialDeleted:
        """``DELETE /v1/vaults/{vault_id}/credentials/{credential_id}``: Delete a Vault credential"""
        return cast(
            "m.VaultCredentialDeleted",
            await self._request(
                "DELETE",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        vault_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.VaultCredential]:
        """``GET /v1/vaults/{vault_id}/credentials``: List a Vault's credentials"""
        return self._list(
            "GET",
            f"/v1/vaults/{seg(vault_id)}/credentials",
            query={"limit": limit, "page": page, "include_archived": include_archived},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def mcp_oauth_validate(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredentialValidation:
        """``POST /v1/vaults/{vault_id}/credentials/{credential_id}/mcp_oauth_validate``: Live-probe an mcp_oauth credential"""
        return cast(
            "m.VaultCredentialValidation",
            await self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}/mcp_oauth_validate",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def retrieve(
        self,
        vault_id: str,
        credential_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``GET /v1/vaults/{vault_id}/credentials/{credential_id}``: Get a Vault credential"""
        return cast(
            "m.VaultCredential",
            await self._request(
                "GET",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        vault_id: str,
        credential_id: str,
        params: m.VaultCredentialUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.VaultCredential:
        """``POST /v1/vaults/{vault_id}/credentials/{credential_id}``: Update a Vault credential"""
        return cast(
            "m.VaultCredential",
            await self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/credentials/{seg(credential_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncVaults(AsyncResource):
    """``client.vaults``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.credentials = AsyncVaultsCredentials(http)

    async def archive(
        self, vault_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Vault:
        """``POST /v1/vaults/{vault_id}/archive``: Archive a Vault"""
        return cast(
            "m.Vault",
            await self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}/archive",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def create(
        self, params: m.VaultCreateRequest, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Vault:
        """``POST /v1/vaults``: Create a Vault"""
        return cast(
            "m.Vault",
            await self._request(
                "POST",
                f"/v1/vaults",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self, vault_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.VaultDeleted:
        """``DELETE /v1/vaults/{vault_id}``: Delete a Vault"""
        return cast(
            "m.VaultDeleted",
            await self._request(
                "DELETE",
                f"/v1/vaults/{seg(vault_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        include_archived: bool | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Vault]:
        """``GET /v1/vaults``: List Vaults"""
        return self._list(
            "GET",
            f"/v1/vaults",
            query={"limit": limit, "page": page, "include_archived": include_archived},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, vault_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Vault:
        """``GET /v1/vaults/{vault_id}``: Get a Vault"""
        return cast(
            "m.Vault",
            await self._request(
                "GET",
                f"/v1/vaults/{seg(vault_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def update(
        self,
        vault_id: str,
        params: m.VaultUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Vault:
        """``POST /v1/vaults/{vault_id}``: Update a Vault"""
        return cast(
            "m.Vault",
            await self._request(
                "POST",
                f"/v1/vaults/{seg(vault_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncWebhooksDeliveries(AsyncResource):
    """``client.webhooks.deliveries``"""

    def list(
        self,
        webhook_id: str,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.WebhookDelivery]:
        """``GET /v1/webhooks/{webhook_id}/deliveries``: The delivery log of an endpoint (Mango addition)"""
        return self._list(
            "GET",
            f"/v1/webhooks/{seg(webhook_id)}/deliveries",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def redeliver(
        self,
        webhook_id: str,
        delivery_id: str,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WebhookDelivery:
        """``POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver``: Send an event to the endpoint again (Mango addition)"""
        return cast(
            "m.WebhookDelivery",
            await self._request(
                "POST",
                f"/v1/webhooks/{seg(webhook_id)}/deliveries/{seg(delivery_id)}/redeliver",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )


class AsyncWebhooks(AsyncResource):
    """``client.webhooks``"""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.deliveries = AsyncWebhooksDeliveries(http)

    async def create(
        self,
        params: m.WebhookCreateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WebhookWithSecret:
        """``POST /v1/webhooks``: Register a webhook endpoint (Mango addition)"""
        return cast(
            "m.WebhookWithSecret",
            await self._request(
                "POST",
                f"/v1/webhooks",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )

    async def delete(
        self, webhook_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.WebhookDeleted:
        """``DELETE /v1/webhooks/{webhook_id}``: Delete a webhook endpoint (Mango addition)"""
        return cast(
            "m.WebhookDeleted",
            await self._request(
                "DELETE",
                f"/v1/webhooks/{seg(webhook_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    def list(
        self,
        *,
        limit: int | None = None,
        page: str | None = None,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> AsyncPaginator[m.Webhook]:
        """``GET /v1/webhooks``: List webhook endpoints (Mango addition)"""
        return self._list(
            "GET",
            f"/v1/webhooks",
            query={"limit": limit, "page": page},
            extra_query=extra_query,
            timeout=timeout,
        )

    async def retrieve(
        self, webhook_id: str, *, extra_query: Query | None = None, timeout: float | None = None
    ) -> m.Webhook:
        """``GET /v1/webhooks/{webhook_id}``: Get a webhook endpoint (Mango addition)"""
        return cast(
            "m.Webhook",
            await self._request(
                "GET",
                f"/v1/webhooks/{seg(webhook_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=None,
                parts=None,
            ),
        )

    async def rotate_secret(
        self,
        webhook_id: str,
        params: m.WebhookRotateSecretRequest | None = None,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.WebhookRotatedSecret:
        """``POST /v1/webhooks/{webhook_id}/rotate_secret``: Rotate a webhook's signing secret (Mango addition)"""
        return cast(
            "m.WebhookRotatedSecret",
            await self._request(
                "POST",
                f"/v1/webhooks/{seg(webhook_id)}/rotate_secret",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params if params is not None else {},
                parts=None,
            ),
        )

    async def update(
        self,
        webhook_id: str,
        params: m.WebhookUpdateRequest,
        *,
        extra_query: Query | None = None,
        timeout: float | None = None,
    ) -> m.Webhook:
        """``POST /v1/webhooks/{webhook_id}``: Update a webhook endpoint (Mango addition)"""
        return cast(
            "m.Webhook",
            await self._request(
                "POST",
                f"/v1/webhooks/{seg(webhook_id)}",
                query={},
                extra_query=extra_query,
                timeout=timeout,
                body=params,
                parts=None,
            ),
        )


class AsyncResources(AsyncResource):
    """Every resource of openapi.yaml (the root of the client)."""

    def __init__(self, http: AsyncHttpClient) -> None:
        super().__init__(http)
        self.agents = AsyncAgents(http)
        self.audit_log = AsyncAuditLog(http)
        self.deployment_runs = AsyncDeploymentRuns(http)
        self.deployments = AsyncDeployments(http)
        self.environments = AsyncEnvironments(http)
        self.files = AsyncFiles(http)
        self.health = AsyncHealth(http)
        self.memory_stores = AsyncMemoryStores(http)
        self.sessions = AsyncSessions(http)
        self.skills = AsyncSkills(http)
        self.vaults = AsyncVaults(http)
        self.webhooks = AsyncWebhooks(http)
