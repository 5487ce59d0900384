"""The generated resources (sync and async) against a tiny local HTTP server: every operation is exposed,
multipart upload sends exact bytes, downloads stream binary bodies, lists page, streams resume."""

from __future__ import annotations

import asyncio
import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mango_sdk import AsyncMango, Mango, NotFoundError

OPENAPI = Path(__file__).resolve().parents[5] / "openapi.yaml"
Reply = tuple[int, dict[str, str], bytes]


class Server:
    def __init__(self, replies: Callable[[str, str, dict[str, str], bytes], Reply]) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append((self.command, self.path, headers, body))
                status, out_headers, payload = replies(self.command, self.path, headers, body)
                self.send_response(status)
                for k, v in out_headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _reply

            def log_message(self, *_: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(replies: Callable[[str, str, dict[str, str], bytes], Reply]) -> Server:
        servers.append(Server(replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def _json(status: int, body: Any, **headers: str) -> Reply:
    return status, {"content-type": "application/json", **headers}, json.dumps(body).encode()


def _parts(headers: dict[str, str], body: bytes) -> list[tuple[str, str | None, str | None, bytes]]:
    msg = BytesParser(policy=HTTP).parsebytes(
        f"content-type: {headers['content-type']}\r\n\r\n".encode() + body
    )
    out = []
    for part in msg.iter_parts():
        disposition = part.get("content-disposition", "")
        name = re.search(r'name="([^"]*)"', disposition)
        filename = re.search(r'filename="([^"]*)"', disposition)
        out.append(
            (
                name.group(1) if name else "",
                filename.group(1) if filename else None,
                part.get("content-type") if filename else None,
                part.get_payload(decode=True) or b"",
            )
        )
    return out


def _binary(size: int) -> bytes:
    return bytes((i * 7 + (i >> 8)) & 0xFF for i in range(size))


def _operation_ids() -> list[str]:
    return re.findall(r"^\s+operationId:\s*([\w.]+)\s*$", OPENAPI.read_text(), re.M)


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_every_operation_is_a_method_at_its_operation_id(flavour: str) -> None:
    ids = _operation_ids()
    assert len(ids) > 60
    client: Any = (Mango if flavour == "sync" else AsyncMango)(base_url="http://127.0.0.1:1", api_key="k")
    missing = []
    for op_id in ids:
        node = client
        for part in op_id.split("."):
            node = getattr(node, part, None)
        if not callable(node):
            missing.append(op_id)
    assert missing == []


def test_files_upload_sends_one_part_with_exact_binary_bytes(serve) -> None:
    data = _binary(200_000)
    server = serve(lambda *_: _json(201, {"id": "file_1", "type": "file"}))
    client = Mango(base_url=server.url, api_key="mango_ak_test", max_retries=0)
    file = client.files.upload(file=("blob.bin", io.BytesIO(data), "application/octet-stream"))
    assert file["id"] == "file_1"
    method, path, headers, body = server.requests[0]
    assert (method, path, headers["authorization"]) == ("POST", "/v1/files", "Bearer mango_ak_test")
    assert _parts(headers, body) == [("file", "blob.bin", "application/octet-stream", data)]


def test_skills_create_sends_a_files_part_per_file_and_fields(serve) -> None:
    server = serve(lambda *_: _json(201, {"id": "skill_1"}))
    client = Mango(base_url=server.url, api_key="k", max_retries=0)
    client.skills.create(
        files=[("x/SKILL.md", b"---\nname: x\n---\n", "text/markdown"), ("x/a.bin", b"\x00\xff")],
        display_title="X",
    )
    _, _, headers, body = server.requests[0]
    assert _parts(headers, body) == [
        ("display_title", None, None, b"X"),
        ("files[]", "x/SKILL.md", "text/markdown", b"---\nname: x\n---\n"),
        ("files[]", "x/a.bin", "application/octet-stream", b"\x00\xff"),
    ]


def test_a_retried_upload_resends_the_same_bytes_from_a_seekable_file(serve, tmp_path) -> None:
    data = _binary(70_000)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    calls: list[int] = []

    def reply(*_: Any) -> Reply:
        calls.append(1)
        if len(calls) == 1:
            return _json(
                503,
                {"type": "error", "error": {"type": "api_error", "message": "x"}},
                **{"retry-after-ms": "1"},
            )
        return _json(201, {"id": "file_1"})

    server = serve(reply)
    client = Mango(base_url=server.url, api_key="k", max_retries=2)
    with src.open("rb") as f:
        client.files.upload(file=f)
    assert len(server.requests) == 2
    for _, _, headers, body in server.requests:
        assert _parts(headers, body) == [("file", "in.bin", "application/octet-stream", data)]


def test_download_streams_binary_after_a_retry_and_404_is_typed(serve, tmp_path) -> None:
    data = _binary(300_000)
    calls: list[int] = []

    def reply(_m: str, path: str, *_: Any) -> Reply:
        calls.append(1)
        if "missing" in path:
            return _json(
                404,
                {
                    "type": "error",
                    "error": {"type": "not_found_error", "message": "no"},
                    "request_id": "req_1",
                },
            )
        if len(calls) == 1:
            return _json(
                503,
                {"type": "error", "error": {"type": "api_error", "message": "x"}},
                **{"retry-after-ms": "1"},
            )
        return 200, {"content-type": "application/octet-stream"}, data

    server = serve(reply)
    client = Mango(base_url=server.url, api_key="k", max_retries=2)
    with client.files.content("file_1") as body:
        assert body.content_type == "application/octet-stream"
        assert b"".join(body.iter_bytes()) == data
    assert client.files.content("file_1").write_to_file(tmp_path / "out.bin") == len(data)
    assert (tmp_path / "out.bin").read_bytes() == data
    with pytest.raises(NotFoundError) as err:
        client.files.content("file_missing")
    assert err.value.request_id == "req_1"


def test_generated_list_pages_and_groups_bracket_query_parameters(serve) -> None:
    def reply(_m: str, path: str, *_: Any) -> Reply:
        second = "page=p2" in path
        return _json(200, {"data": [{"id": "e2" if second else "e1"}], "next_page": None if second else "p2"})

    server = serve(reply)
    client = Mango(base_url=server.url, api_key="k", max_retries=0)
    ids = [
        e["id"]
        for e in client.sessions.threads.events.list("sesn_1", "sthr_1", limit=1, types=["user.message"])
    ]
    assert ids == ["e1", "e2"]
    paths = [p for _, p, _, _ in server.requests]
    assert paths[0] == "/v1/sessions/sesn_1/threads/sthr_1/events?limit=1&types%5B%5D=user.message"
    assert paths[1].endswith("&page=p2")


def test_async_client_json_list_upload_download_and_typed_errors(serve) -> None:
    data = _binary(100_000)

    def reply(method: str, path: str, headers: dict[str, str], body: bytes) -> Reply:
        if path.startswith("/v1/files/file_1/content"):
            return 200, {"content-type": "application/octet-stream"}, data
        if method == "POST" and path == "/v1/files":
            assert _parts(headers, body) == [("file", "a.bin", "application/x-a", data)]
            return _json(201, {"id": "file_1"})
        if path.startswith("/v1/agents?"):
            second = "page=p2" in path
            return _json(
                200, {"data": [{"id": "a2" if second else "a1"}], "next_page": None if second else "p2"}
            )
        return _json(
            404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}, "request_id": "r"}
        )

    server = serve(reply)

    async def main() -> None:
        async with AsyncMango(base_url=server.url, api_key="k", max_retries=0) as client:
            assert [a["id"] async for a in client.agents.list(limit=1)] == ["a1", "a2"]
            assert (await client.files.upload(file=("a.bin", data, "application/x-a")))["id"] == "file_1"
            async with await client.files.content("file_1") as body:
                assert b"".join([c async for c in body.aiter_bytes()]) == data
            with pytest.raises(NotFoundError):
                await client.agents.retrieve("agent_nope")

    asyncio.run(main())


def test_async_stream_reconnects_with_last_event_id_and_skips_duplicates(serve) -> None:
    def frame(seq: int, type_: str) -> str:
        return f"id: {seq}\nevent: message\ndata: {json.dumps({'type': type_, 'id': f'sevt_{seq}'})}\n\n"

    def reply(_m: str, _p: str, headers: dict[str, str], _b: bytes) -> Reply:
        if "last-event-id" not in headers:
            return (
                200,
                {"content-type": "text/event-stream"},
                (frame(1, "user.message") + ": ping\n\n").encode(),
            )
        assert headers["last-event-id"] == "1"
        text = frame(1, "user.message") + frame(2, "session.status_idle") + frame(3, "session.deleted")
        return 200, {"content-type": "text/event-stream"}, text.encode()

    server = serve(reply)

    async def main() -> list[tuple[str, str]]:
        client = AsyncMango(base_url=server.url, api_key="k", max_retries=2)
        client._http.sleep = lambda _s: asyncio.sleep(0)
        return [(e.id, e.event["type"]) async for e in client.sessions.events.stream("sesn_1", timeout=5)]

    assert asyncio.run(main()) == [
        ("1", "user.message"),
        ("2", "session.status_idle"),
        ("3", "session.deleted"),
    ]
    assert [h.get("last-event-id") for _, _, h, _ in server.requests] == [None, "1"]
