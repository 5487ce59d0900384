"""Resource groups: one method per operation, typed with the generated models."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import httpx

from ._core import HttpClient, is_retryable_status, path_segment, retry_delay
from ._generated.models import (
    Agent,
    AgentCreateRequest,
    AgentUpdateRequest,
    Environment,
    EnvironmentCreateRequest,
    EnvironmentDeleted,
    EnvironmentUpdateRequest,
    HealthStatus,
    PolledWork,
    RedactedWork,
    Session,
    SessionCreateRequest,
    SessionDeleted,
    SessionEvent,
    SessionEventsSendRequest,
    SessionUpdateRequest,
    Work,
    WorkCreateRequest,
    WorkFailRequest,
    WorkHeartbeat,
    WorkQueueStats,
    WorkResultRequest,
    WorkStopRequest,
    WorkUpdateRequest,
)
from .errors import APIConnectionError, APITimeoutError, MangoError, error_from_response
from .pagination import Paginator
from .sse import SseParser

__all__ = [
    "Agents",
    "Environments",
    "EventsSent",
    "Health",
    "SessionEvents",
    "Sessions",
    "StreamEvent",
    "WorkQueue",
]

EventsSent = dict[str, list[SessionEvent]]
"""The response of ``sessions.events.send``: ``{"data": [<persisted events>]}``."""


def _page_fetcher(http: HttpClient, path: str, params: dict[str, Any]) -> Any:
    return lambda page: http.request("GET", path, query={**params, "page": page})


class Agents:
    """``client.agents``: versioned Agent configurations."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http

    def create(self, params: AgentCreateRequest) -> Agent:
        """``POST /v1/agents``: creates an Agent at version 1."""
        return cast(Agent, self._http.request("POST", "/v1/agents", body=params))

    def retrieve(self, agent_id: str, *, version: int | None = None) -> Agent:
        """``GET /v1/agents/{agent_id}``: the latest version, or ``version``."""
        return cast(
            Agent,
            self._http.request("GET", f"/v1/agents/{path_segment(agent_id)}", query={"version": version}),
        )

    def update(self, agent_id: str, params: AgentUpdateRequest) -> Agent:
        """``POST /v1/agents/{agent_id}``: stores a new version if anything changed."""
        return cast(Agent, self._http.request("POST", f"/v1/agents/{path_segment(agent_id)}", body=params))

    def list(self, **params: Any) -> Paginator[Agent]:
        """``GET /v1/agents``: latest version of each Agent, newest first."""
        return Paginator(_page_fetcher(self._http, "/v1/agents", params), params.pop("page", None))

    def list_versions(self, agent_id: str, **params: Any) -> Paginator[Agent]:
        """``GET /v1/agents/{agent_id}/versions``: every stored version, newest first."""
        path = f"/v1/agents/{path_segment(agent_id)}/versions"
        return Paginator(_page_fetcher(self._http, path, params), params.pop("page", None))

    def archive(self, agent_id: str) -> Agent:
        """``POST /v1/agents/{agent_id}/archive``: permanent; returns the archived Agent."""
        return cast(Agent, self._http.request("POST", f"/v1/agents/{path_segment(agent_id)}/archive"))


class WorkQueue:
    """``client.environments.work``: the Work queue of an Environment."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http

    def _base(self, environment_id: str) -> str:
        return f"/v1/environments/{path_segment(environment_id)}/work"

    def _item(self, environment_id: str, work_id: str) -> str:
        return f"{self._base(environment_id)}/{path_segment(work_id)}"

    def create(self, environment_id: str, params: WorkCreateRequest | None = None) -> Work:
        """``POST .../work``: enqueues a healthcheck (the default ``data``)."""
        body = params if params is not None else {"data": {"type": "healthcheck"}}
        return cast(Work, self._http.request("POST", self._base(environment_id), body=body))

    def retrieve(self, environment_id: str, work_id: str) -> RedactedWork:
        return cast(RedactedWork, self._http.request("GET", self._item(environment_id, work_id)))

    def update(self, environment_id: str, work_id: str, params: WorkUpdateRequest) -> RedactedWork:
        return cast(
            RedactedWork, self._http.request("POST", self._item(environment_id, work_id), body=params)
        )

    def list(self, environment_id: str, **params: Any) -> Paginator[RedactedWork]:
        return Paginator(
            _page_fetcher(self._http, self._base(environment_id), params), params.pop("page", None)
        )

    def poll(
        self, environment_id: str, *, worker_id: str | None = None, block_ms: int | None = None
    ) -> PolledWork | None:
        """``GET .../work/poll`` (Environment key): the claimed item with its ``secret``, or ``None`` when the
        queue is empty."""
        query = {"worker_id": worker_id, "block_ms": block_ms}
        timeout = self._http.timeout + (block_ms or 0) / 1000
        polled = self._http.request("GET", f"{self._base(environment_id)}/poll", query=query, timeout=timeout)
        return cast(PolledWork, polled) if polled else None

    def ack(self, environment_id: str, work_id: str) -> RedactedWork:
        return cast(RedactedWork, self._http.request("POST", f"{self._item(environment_id, work_id)}/ack"))

    def heartbeat(
        self,
        environment_id: str,
        work_id: str,
        *,
        expected_last_heartbeat: str,
        desired_ttl_seconds: int | None = None,
    ) -> WorkHeartbeat:
        """``POST .../heartbeat`` (Work token): ``NO_HEARTBEAT`` first, then the previous ``last_heartbeat``.
        A stale value raises ``PreconditionFailedError`` with ``current_state``."""
        query = {
            "expected_last_heartbeat": expected_last_heartbeat,
            "desired_ttl_seconds": desired_ttl_seconds,
        }
        return cast(
            WorkHeartbeat,
            self._http.request("POST", f"{self._item(environment_id, work_id)}/heartbeat", query=query),
        )

    def result(self, environment_id: str, work_id: str, params: WorkResultRequest) -> Work:
        return cast(
            Work, self._http.request("POST", f"{self._item(environment_id, work_id)}/result", body=params)
        )

    def fail(self, environment_id: str, work_id: str, params: WorkFailRequest) -> Work:
        return cast(
            Work, self._http.request("POST", f"{self._item(environment_id, work_id)}/fail", body=params)
        )

    def stop(self, environment_id: str, work_id: str, params: WorkStopRequest | None = None) -> None:
        self._http.request("POST", f"{self._item(environment_id, work_id)}/stop", body=params or {})

    def stats(self, environment_id: str) -> WorkQueueStats:
        return cast(WorkQueueStats, self._http.request("GET", f"{self._base(environment_id)}/stats"))


class Environments:
    """``client.environments``: where a Session's tools run."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http
        self.work = WorkQueue(http)

    def create(self, params: EnvironmentCreateRequest) -> Environment:
        return cast(Environment, self._http.request("POST", "/v1/environments", body=params))

    def retrieve(self, environment_id: str) -> Environment:
        return cast(
            Environment, self._http.request("GET", f"/v1/environments/{path_segment(environment_id)}")
        )

    def update(self, environment_id: str, params: EnvironmentUpdateRequest) -> Environment:
        path = f"/v1/environments/{path_segment(environment_id)}"
        return cast(Environment, self._http.request("POST", path, body=params))

    def list(self, **params: Any) -> Paginator[Environment]:
        return Paginator(_page_fetcher(self._http, "/v1/environments", params), params.pop("page", None))

    def archive(self, environment_id: str) -> Environment:
        path = f"/v1/environments/{path_segment(environment_id)}/archive"
        return cast(Environment, self._http.request("POST", path))

    def delete(self, environment_id: str) -> EnvironmentDeleted:
        path = f"/v1/environments/{path_segment(environment_id)}"
        return cast(EnvironmentDeleted, self._http.request("DELETE", path))


@dataclass(frozen=True)
class StreamEvent:
    """One Session event from the stream: ``id`` is its sequence number (pass it as ``last_event_id``)."""

    id: str
    event: SessionEvent


class SessionEvents:
    """``client.sessions.events``: a Session's durable event log."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http

    def _base(self, session_id: str) -> str:
        return f"/v1/sessions/{path_segment(session_id)}/events"

    def send(self, session_id: str, params: SessionEventsSendRequest) -> EventsSent:
        """``POST /v1/sessions/{id}/events``: appends ``user.message`` / ``user.interrupt`` events."""
        return cast(EventsSent, self._http.request("POST", self._base(session_id), body=params))

    def list(self, session_id: str, **params: Any) -> Paginator[SessionEvent]:
        """``GET /v1/sessions/{id}/events``: the history in sequence order (``order="desc"`` reverses)."""
        return Paginator(_page_fetcher(self._http, self._base(session_id), params), params.pop("page", None))

    def stream(
        self,
        session_id: str,
        *,
        last_event_id: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> Iterator[StreamEvent]:
        """``GET /v1/sessions/{id}/events/stream`` as Server-Sent Events, from the beginning or after
        ``last_event_id``. Pings are skipped. When the connection drops (or is silent for ``timeout``
        seconds) it reconnects with ``Last-Event-ID`` set to the last yielded id, so every event is seen
        once and in order; ``max_retries`` consecutive failed reconnects (with backoff) raise the last error.
        Iteration ends after ``session.deleted``. Nothing is sent until iteration starts."""
        return _stream_events(
            self._http,
            f"{self._base(session_id)}/stream",
            last_event_id,
            self._http.max_retries if max_retries is None else max_retries,
            timeout,
        )


def _stream_events(
    http: HttpClient, path: str, last_id: str | None, max_retries: int, timeout: float | None
) -> Iterator[StreamEvent]:
    failures = 0  # consecutive connections that failed before yielding anything
    while True:
        retry_headers: httpx.Headers | None = None
        try:
            with http.stream(
                path, headers={} if last_id is None else {"last-event-id": last_id}, timeout=timeout
            ) as response:
                if not 200 <= response.status_code < 300:
                    response.read()
                    error: MangoError = error_from_response(
                        response.status_code, response.headers, response.text
                    )
                    if not is_retryable_status(response.status_code):
                        raise error
                    retry_headers = response.headers
                else:
                    parser = SseParser()
                    for chunk in response.iter_text():
                        for frame in parser.push(chunk):
                            if frame.event == "ping":
                                continue
                            # Defensive: never yield an event at or before one already yielded.
                            if (
                                frame.id is not None
                                and last_id is not None
                                and not _is_after(frame.id, last_id)
                            ):
                                continue
                            event = _parse_event(frame.data)
                            if frame.id is not None:
                                last_id = frame.id
                            failures = 0
                            yield StreamEvent(id=frame.id or last_id or "", event=event)
                            if event["type"] == "session.deleted":
                                return
                    error = APIConnectionError(f"Event stream closed before session.deleted: GET {path}")
        except httpx.TimeoutException as exc:
            error = APITimeoutError(f"Event stream timed out: GET {path}", type="connection_error")
            error.__cause__ = exc
        except httpx.TransportError as exc:
            error = APIConnectionError(f"Event stream connection error: GET {path}: {exc}")
            error.__cause__ = exc
        if failures >= max_retries:
            raise error
        http.sleep(retry_delay(failures, retry_headers))
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


class Sessions:
    """``client.sessions``: Sessions running a frozen Agent in an Environment."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http
        self.events = SessionEvents(http)

    def create(self, params: SessionCreateRequest) -> Session:
        """``POST /v1/sessions``: 201 with the Session (``running`` when ``initial_events`` is non-empty)."""
        return cast(Session, self._http.request("POST", "/v1/sessions", body=params))

    def retrieve(self, session_id: str) -> Session:
        return cast(Session, self._http.request("GET", f"/v1/sessions/{path_segment(session_id)}"))

    def update(self, session_id: str, params: SessionUpdateRequest) -> Session:
        return cast(
            Session, self._http.request("POST", f"/v1/sessions/{path_segment(session_id)}", body=params)
        )

    def list(self, **params: Any) -> Paginator[Session]:
        """``GET /v1/sessions``: newest first by default."""
        return Paginator(_page_fetcher(self._http, "/v1/sessions", params), params.pop("page", None))

    def archive(self, session_id: str) -> Session:
        return cast(Session, self._http.request("POST", f"/v1/sessions/{path_segment(session_id)}/archive"))

    def delete(self, session_id: str) -> SessionDeleted:
        """``DELETE /v1/sessions/{id}``: appends ``session.deleted``; returns the tombstone."""
        return cast(SessionDeleted, self._http.request("DELETE", f"/v1/sessions/{path_segment(session_id)}"))


class Health:
    """``client.health``: liveness and readiness probes."""

    def __init__(self, http: HttpClient) -> None:
        self._http = http

    def liveness(self) -> HealthStatus:
        return cast(HealthStatus, self._http.request("GET", "/healthz"))
