"""Idempotency-Key on POST (docs/api-guide.md, "Idempotent requests") against a tiny local HTTP server."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator

import pytest
from test_retries import AGENT, Reply, Server

from mango_sdk import AsyncMango, ConflictError, Mango, ResponseInfo, idempotency_key

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[int], Reply]], Server]]:
    servers: list[Server] = []

    def start(replies: Callable[[int], Reply]) -> Server:
        servers.append(Server(replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def keys(server: Server) -> list[str | None]:
    return [{k.lower(): v for k, v in r[2].items()}.get("idempotency-key") for r in server.requests]


def envelope(code: str) -> bytes:
    error = {"type": "invalid_request_error", "message": code, "details": {"error_code": code}}
    return json.dumps({"type": "error", "error": error, "request_id": "req_e"}).encode()


def test_every_retry_of_a_post_resends_its_one_uuid_key_and_the_next_call_gets_a_new_one(serve) -> None:
    server = serve(lambda n: (503, {"retry-after-ms": "0"}, b"") if n == 1 else (201, {}, AGENT))
    mango = Mango(base_url=server.url, api_key="mango_ak_test")
    mango._http.sleep = lambda _s: None
    mango.agents.create({"name": "a", "model": "m"})
    mango.agents.create({"name": "a", "model": "m"})
    sent = keys(server)
    assert sent[0] is not None and UUID.match(sent[0])
    assert sent[1] == sent[0]
    assert sent[2] is not None and sent[2] != sent[0]


def test_the_callers_key_is_sent_and_a_get_sends_none(serve) -> None:
    server = serve(lambda n: (201, {}, AGENT))
    mango = Mango(base_url=server.url, api_key="mango_ak_test")
    with idempotency_key("my-key-1"):
        mango.agents.create({"name": "a", "model": "m"})
    mango.agents.retrieve("agent_1")
    assert keys(server) == ["my-key-1", None]


def test_a_409_in_progress_is_retried_and_the_replay_is_reported(serve) -> None:
    server = serve(
        lambda n: (
            (409, {"retry-after": "0"}, envelope("idempotency_in_progress"))
            if n == 1
            else (201, {"idempotent-replayed": "true", "request-id": "req_first"}, AGENT)
        )
    )
    seen: list[ResponseInfo] = []
    mango = Mango(base_url=server.url, api_key="mango_ak_test", on_response=seen.append)
    mango._http.sleep = lambda _s: None
    mango.agents.create({"name": "a", "model": "m"})
    assert len(server.requests) == 2
    assert [(i.status, i.request_id, i.replayed, i.idempotency_key) for i in seen] == [
        (201, "req_first", True, keys(server)[0])
    ]


def test_another_409_is_not_retried(serve) -> None:
    server = serve(lambda n: (409, {}, envelope("idempotency_key_reused")))
    mango = Mango(base_url=server.url, api_key="mango_ak_test")
    with pytest.raises(ConflictError):
        mango.agents.create({"name": "a", "model": "m"})
    assert len(server.requests) == 1


def test_the_async_client_does_the_same(serve) -> None:
    server = serve(
        lambda n: (
            (409, {"retry-after": "0"}, envelope("idempotency_in_progress")) if n == 1 else (201, {}, AGENT)
        )
    )
    seen: list[ResponseInfo] = []

    async def run() -> None:
        async with AsyncMango(base_url=server.url, api_key="mango_ak_test", on_response=seen.append) as m:

            async def no_sleep(_s: float) -> None:
                return None

            m._http.sleep = no_sleep
            with idempotency_key("async-key"):
                await m.agents.create({"name": "a", "model": "m"})

    asyncio.run(run())
    assert keys(server) == ["async-key", "async-key"]
    assert [i.replayed for i in seen] == [False]
