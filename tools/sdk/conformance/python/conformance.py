"""The Python conformance program: the mango-sdk wheel (pip-installed) against a real deployment, with the
sync client for Sessions and Files and the async client for the same File workflow
(tools/sdk/test/conformance.e2e-spec.ts runs it)."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import time
from typing import Any

import mango_sdk
from mango_sdk import AsyncMango, Mango, NotFoundError

LANG = "python"


def check(cond: object, what: str) -> None:
    if not cond:
        raise SystemExit(f"conformance: {what}")


def payload() -> bytes:
    return bytes((i * 31 + (i >> 11)) & 0xFF for i in range(5 * 1024 * 1024 + 12345))


def sessions(mango: Mango) -> None:
    agent = mango.agents.create(
        {
            "name": f"conformance-{LANG}",
            "model": "claude-sonnet-4-6",
            "tools": [
                {
                    "type": "custom",
                    "name": "lookup",
                    "description": "Look a thing up",
                    "input_schema": {"type": "object"},
                }
            ],
        }  # type: ignore[typeddict-item]
    )
    session = mango.sessions.create(
        {
            "agent": agent["id"],
            "environment_id": os.environ["MANGO_ENVIRONMENT_ID"],
            "budget": {"type": "limit", "max_list_cost": {"amount": "1", "currency": "USD"}},
            "initial_events": [
                {"type": "user.message", "content": [{"type": "text", "text": f"conformance {LANG}"}]}
            ],
        }  # type: ignore[typeddict-item]
    )
    check(session["budget"]["max_list_cost"]["amount"] == "1", "the Session carries its budget")  # type: ignore[index]

    streamed: list[dict[str, Any]] = []
    resume_id = ""
    for ev in mango.sessions.events.stream(session["id"], timeout=60):
        streamed.append(dict(ev.event))
        resume_id = ev.id
        if len(streamed) == 2:
            break
    for ev in mango.sessions.events.stream(session["id"], last_event_id=resume_id, timeout=60):
        streamed.append(dict(ev.event))
        if ev.event["type"] == "session.status_idle":
            break
    check(streamed[-1]["stop_reason"]["type"] == "requires_action", f"first turn: {streamed[-1]}")

    paged = [dict(e) for e in mango.sessions.events.list(session["id"], limit=2)]
    check([e["id"] for e in paged] == [e["id"] for e in streamed], "paged == streamed (no gap, no duplicate)")

    usage: Any = mango.sessions.retrieve(session["id"])["usage"]
    check(usage["input_tokens"] == 2000 and usage["output_tokens"] == 400, f"usage {usage}")
    check(usage["list_cost"] == {"amount": "2", "currency": "USD"}, f"list_cost {usage.get('list_cost')}")

    use = next(e for e in paged if e["type"] == "agent.custom_tool_use")
    mango.sessions.events.send(
        session["id"],
        {
            "events": [
                {
                    "type": "user.custom_tool_result",
                    "custom_tool_use_id": use["id"],
                    "content": [{"type": "text", "text": "42"}],
                }
            ]
        },  # type: ignore[typeddict-item]
    )
    after: list[Any] = []
    for _ in range(300):
        after = list(mango.sessions.events.list(session["id"], limit=100))
        if sum(1 for e in after if e["type"] == "session.status_idle") >= 2:
            break
        time.sleep(0.2)
    gate = next((e for e in after if e["type"] == "session.usage"), None)
    check(gate is not None, "a session.usage event")
    check(
        gate["usage"]["list_cost"]["amount"] == "2" and gate["budget"]["max_list_cost"]["amount"] == "1",
        f"{gate}",
    )  # type: ignore[index]
    check(after[-1]["stop_reason"]["type"] == "budget_reached", "budget_reached")


def files_sync(mango: Mango, data: bytes) -> None:
    file = mango.files.upload(file=(f"conformance-{LANG}.bin", io.BytesIO(data), "application/octet-stream"))
    check(file["size_bytes"] == len(data), f"uploaded {file}")
    check(any(f["id"] == file["id"] for f in mango.files.list(limit=1)), "listed (paging by 1)")
    with mango.files.content(file["id"]) as body:
        got = b"".join(body.iter_bytes())
    check(got == data, "download is byte-identical")
    check(mango.files.delete(file["id"])["id"] == file["id"], "deleted")
    try:
        mango.files.retrieve(file["id"])
        check(False, "a deleted File is gone")
    except NotFoundError as err:
        check(err.request_id, "a request id")


async def files_async(data: bytes) -> None:
    async with AsyncMango(
        base_url=os.environ["MANGO_BASE_URL"], api_key=os.environ["MANGO_API_KEY"]
    ) as mango:
        file = await mango.files.upload(
            file=(f"conformance-{LANG}-async.bin", data, "application/octet-stream")
        )
        ids = [f["id"] async for f in mango.files.list(limit=1)]
        check(file["id"] in ids, "async: listed")
        async with await mango.files.content(file["id"]) as body:
            got = b"".join([c async for c in body.aiter_bytes()])
        check(got == data, "async: byte-identical")
        await mango.files.delete(file["id"])
        try:
            await mango.files.retrieve(file["id"])
            check(False, "async: a deleted File is gone")
        except NotFoundError:
            pass


def main() -> None:
    check(
        not mango_sdk.__file__.startswith(os.environ.get("MANGO_SDK_SOURCE", "/nonexistent")),
        "the installed wheel is used",
    )
    data = payload()
    with Mango(base_url=os.environ["MANGO_BASE_URL"], api_key=os.environ["MANGO_API_KEY"]) as mango:
        sessions(mango)
        files_sync(mango, data)
    asyncio.run(files_async(data))
    print(f"CONFORMANCE OK {LANG} {mango_sdk.__version__}")


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:
        print(f"conformance: {exc!r}", file=sys.stderr)
        raise
