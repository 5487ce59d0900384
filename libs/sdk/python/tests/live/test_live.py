"""Live tests against a real Mango API process.

tools/sdk/test/python-sdk.e2e-spec.ts starts apps/api and runs ``pytest tests/live`` with MANGO_BASE_URL,
MANGO_API_KEY (Workspace key), MANGO_ENVIRONMENT_ID and MANGO_ENVIRONMENT_KEY (an Environment key) set.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pytest

from mango_sdk import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    Mango,
    NotFoundError,
    PermissionDeniedError,
    PreconditionFailedError,
    StreamEvent,
    decode_work_secret,
)

UNKNOWN_AGENT = "agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ"


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set (run through tools/sdk/test/python-sdk.e2e-spec.ts)")
    return value


@pytest.fixture
def client() -> Mango:
    return Mango(base_url=env("MANGO_BASE_URL"), api_key=env("MANGO_API_KEY"), max_retries=0)


def test_agents_create_update_retrieve_and_paginate(client: Mango) -> None:
    agent = client.agents.create({"name": "py-agent", "model": "claude-sonnet-4-6"})
    assert agent["version"] == 1
    assert agent["id"].startswith("agent_")
    v2 = client.agents.update(agent["id"], {"version": 1, "description": "two"})
    assert (v2["version"], v2["description"]) == (2, "two")
    with pytest.raises(ConflictError):
        client.agents.update(agent["id"], {"version": 1, "description": "stale"})
    assert client.agents.retrieve(agent["id"], version=1)["description"] is None

    created = {agent["id"]} | {
        client.agents.create({"name": f"py-page-{i}", "model": "m"})["id"] for i in range(4)
    }
    seen = [a["id"] for a in client.agents.list(limit=2)]
    assert len(seen) == len(set(seen)), "an agent was listed twice"
    assert created <= set(seen)
    raw = client.request("GET", "/v1/agents", query={"limit": 1})
    assert len(raw["data"]) == 1
    assert isinstance(raw["next_page"], str)
    pages = list(client.agents.list(limit=2).iter_pages())
    assert len(pages) >= 3
    assert all(len(p["data"]) <= 2 for p in pages)
    assert pages[-1]["next_page"] is None


def test_error_envelopes(client: Mango) -> None:
    with pytest.raises(NotFoundError) as not_found:
        client.agents.retrieve(UNKNOWN_AGENT)
    err = not_found.value
    assert (err.status, err.type) == (404, "not_found_error")
    assert err.request_id and err.request_id.startswith("req_")
    assert err.message

    with pytest.raises(BadRequestError) as bad:
        client.agents.create({"name": "", "model": "m"})
    assert (bad.value.status, bad.value.type) == (400, "invalid_request_error")
    assert bad.value.request_id and bad.value.request_id.startswith("req_")
    assert bad.value.headers is not None
    assert bad.value.request_id == bad.value.headers.get("request-id")

    anonymous = Mango(base_url=client.base_url, api_key="mango_ak_nope", max_retries=0)
    with pytest.raises(AuthenticationError) as unauthenticated:
        anonymous.agents.list().first_page()
    assert (unauthenticated.value.request_id or "").startswith("req_")


def test_remaining_resource_methods(client: Mango) -> None:
    assert client.health.liveness() == {"status": "ok"}

    agent = client.agents.create({"name": "py-versions", "model": "m"})
    client.agents.update(agent["id"], {"version": 1, "system": "v2"})
    assert [a["version"] for a in client.agents.list_versions(agent["id"], limit=1)] == [2, 1]

    environment = client.environments.create({"name": "py-resources", "metadata": {"team": "a"}})
    renamed = client.environments.update(
        environment["id"], {"name": "py-renamed", "metadata": {"team": None}}
    )
    assert (renamed["name"], renamed["metadata"]) == ("py-renamed", {})
    assert environment["id"] in [e["id"] for e in client.environments.list(limit=100)]
    assert client.environments.archive(environment["id"])["archived_at"] is not None
    assert environment["id"] not in [e["id"] for e in client.environments.list(limit=100)]

    live_env = client.environments.create({"name": "py-resources-live"})
    session = client.sessions.create({"agent": agent["id"], "environment_id": live_env["id"]})
    assert client.sessions.retrieve(session["id"])["status"] == "idle"
    updated = client.sessions.update(session["id"], {"title": "renamed", "metadata": {"k": "v"}})
    assert (updated["title"], updated["metadata"]) == ("renamed", {"k": "v"})
    assert session["id"] in [s["id"] for s in client.sessions.list(limit=1)]
    assert client.sessions.archive(session["id"])["archived_at"] is not None

    work = client.environments.work.create(live_env["id"])
    tagged = client.environments.work.update(live_env["id"], work["id"], {"metadata": {"k": "v"}})
    assert tagged["metadata"] == {"k": "v"}
    assert client.agents.archive(agent["id"])["archived_at"] is not None


def test_environment_work_flow_with_the_work_secret(client: Mango) -> None:
    env_id = env("MANGO_ENVIRONMENT_ID")
    supervisor = client.with_token(env("MANGO_ENVIRONMENT_KEY"))
    with pytest.raises(PermissionDeniedError):
        supervisor.environments.list().first_page()
    assert client.environments.retrieve(env_id)["id"] == env_id

    work = client.environments.work.create(env_id)
    assert (work["state"], work["data"]) == ("queued", {"type": "healthcheck"})
    assert supervisor.environments.work.stats(env_id)["depth"] >= 1
    polled = supervisor.environments.work.poll(env_id, worker_id="py-sdk")
    assert polled is not None
    assert polled["id"] == work["id"]
    secret = decode_work_secret(polled["secret"])
    assert secret["sessions_token"].startswith("mango_wt_")
    assert urlparse(secret["api_base_url"]).scheme in ("http", "https")
    supervisor.environments.work.ack(env_id, work["id"])

    worker = client.with_token(secret["sessions_token"], base_url=secret["api_base_url"])
    beat = worker.environments.work.heartbeat(env_id, work["id"], expected_last_heartbeat="NO_HEARTBEAT")
    assert (beat["state"], beat["lease_extended"]) == ("active", True)
    with pytest.raises(PreconditionFailedError) as stale:
        worker.environments.work.heartbeat(
            env_id, work["id"], expected_last_heartbeat="2020-01-01T00:00:00.000Z"
        )
    assert (stale.value.current_state or {}).get("state") == "active"
    done = worker.environments.work.result(env_id, work["id"], {"status": "succeeded", "message": "ok"})
    assert done["result"] == {"status": "succeeded", "message": "ok"}
    assert supervisor.environments.work.poll(env_id) is None
    assert work["id"] in [w["id"] for w in client.environments.work.list(env_id, limit=1)]

    again = client.environments.work.create(env_id)
    assert client.environments.work.stop(env_id, again["id"], {"force": True}) is None
    assert (client.environments.work.retrieve(env_id, again["id"])["result"] or {}).get(
        "status"
    ) == "cancelled"

    third = client.environments.work.create(env_id)
    polled_third = supervisor.environments.work.poll(env_id)
    assert polled_third is not None
    assert polled_third["id"] == third["id"]
    supervisor.environments.work.ack(env_id, third["id"])
    third_worker = client.with_token(decode_work_secret(polled_third["secret"])["sessions_token"])
    third_worker.environments.work.heartbeat(env_id, third["id"], expected_last_heartbeat="NO_HEARTBEAT")
    # Fail reaches the route with the Work token; the server refuses it for healthcheck Work.
    with pytest.raises(BadRequestError, match="only for session Work"):
        third_worker.environments.work.fail(env_id, third["id"], {"message": "boom"})
    assert client.environments.delete(env_id) == {"id": env_id, "type": "environment_deleted"}


def test_session_events_list_and_stream_with_resume(client: Mango) -> None:
    agent = client.agents.create({"name": "py-session-agent", "model": "m"})
    environment = client.environments.create({"name": "py-session-env"})
    session = client.sessions.create(
        {
            "agent": agent["id"],
            "environment_id": environment["id"],
            "title": "py sdk",
            "initial_events": [{"type": "user.message", "content": [{"type": "text", "text": "hello"}]}],
        }
    )
    assert (session["status"], session["title"], session["agent"]["id"]) == ("running", "py sdk", agent["id"])

    sent = client.sessions.events.send(
        session["id"],
        {
            "events": [
                {"type": "user.message", "content": [{"type": "text", "text": "one"}]},
                {"type": "user.message", "content": [{"type": "text", "text": "two"}]},
                {"type": "user.interrupt"},
            ]
        },
    )
    assert [e["type"] for e in sent["data"]] == ["user.message", "user.message", "user.interrupt"]
    listed = [e["type"] for e in client.sessions.events.list(session["id"], limit=1)]
    assert listed == ["user.message", "user.message", "user.message", "user.interrupt"]

    def read(last_event_id: str | None, n: int) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        stream = client.sessions.events.stream(session["id"], last_event_id=last_event_id, timeout=30)
        for ev in stream:
            out.append(ev)
            if len(out) == n:
                break
        return out

    everything = read(None, 4)
    assert [e.id for e in everything] == ["1", "2", "3", "4"]
    assert [e.event["type"] for e in everything] == ["user.message"] * 3 + ["user.interrupt"]
    assert [e.id for e in read("2", 2)] == ["3", "4"]  # resume: no gap, no duplicate

    client.sessions.events.send(
        session["id"], {"events": [{"type": "user.message", "content": [{"type": "text", "text": "three"}]}]}
    )
    tail: list[StreamEvent] = []
    for ev in client.sessions.events.stream(session["id"], last_event_id="4", timeout=30):
        tail.append(ev)
        if ev.id == "5":
            assert client.sessions.delete(session["id"]) == {"id": session["id"], "type": "session_deleted"}
    # The stream ended by itself after session.deleted.
    assert tail[0].id == "5"
    assert tail[-1].event["type"] == "session.deleted"
    assert [int(e.id) for e in tail] == list(range(5, 5 + len(tail)))

    with pytest.raises(NotFoundError):
        next(iter(client.sessions.events.stream("sesn_01JD2Y3QX9V5M8K7R6T4W2P0ZZ")))
