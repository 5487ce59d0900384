"""Retries against a tiny local HTTP server (a stand-in for a flaky upstream; Mango itself is in tests/live)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mango_sdk import (
    APIConnectionError,
    BadRequestError,
    Mango,
    MangoError,
    NotFoundError,
    RateLimitError,
    retry_delay,
)

Reply = tuple[int, dict[str, str], bytes]


class Server:
    def __init__(self, replies: Callable[[int], Reply]) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append((self.command, self.path, dict(self.headers), body))
                status, headers, payload = replies(len(outer.requests))
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _reply

            def log_message(self, *_: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[int], Reply]], Server]]:
    servers: list[Server] = []

    def start(replies: Callable[[int], Reply]) -> Server:
        servers.append(Server(replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def client(url: str, slept: list[float], **kwargs: int) -> Mango:
    c = Mango(base_url=url, api_key="mango_ak_test", **kwargs)
    c._http.sleep = slept.append
    return c


AGENT = json.dumps({"id": "agent_1", "type": "agent", "version": 1}).encode()


def test_retries_a_503_then_succeeds_replaying_the_post_body(serve) -> None:
    server = serve(lambda n: (503, {"retry-after-ms": "5"}, b"") if n == 1 else (201, {}, AGENT))
    slept: list[float] = []
    agent = client(server.url, slept).agents.create({"name": "a", "model": "m"})
    assert agent["id"] == "agent_1"
    assert [r[0] for r in server.requests] == ["POST", "POST"]
    assert server.requests[0][3] == server.requests[1][3] == b'{"name": "a", "model": "m"}'
    assert {k.lower(): v for k, v in server.requests[0][2].items()}["authorization"] == "Bearer mango_ak_test"
    assert slept == [0.005]


def test_gives_up_after_max_retries_with_the_envelope(serve) -> None:
    envelope = {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "slow down"},
        "request_id": "req_1",
    }
    server = serve(lambda n: (429, {"request-id": "req_h"}, json.dumps(envelope).encode()))
    slept: list[float] = []
    with pytest.raises(RateLimitError) as info:
        client(server.url, slept, max_retries=3).agents.retrieve("agent_x")
    err = info.value
    assert (err.status, err.type, err.message, err.request_id) == (
        429,
        "rate_limit_error",
        "slow down",
        "req_1",
    )
    assert len(server.requests) == 4
    assert len(slept) == 3
    for i, delay in enumerate(slept):
        assert 0.75 * 0.5 * 2**i <= delay <= 0.5 * 2**i


def test_does_not_retry_a_400(serve) -> None:
    server = serve(lambda n: (400, {"request-id": "req_h"}, b"not json"))
    slept: list[float] = []
    with pytest.raises(BadRequestError) as info:
        client(server.url, slept).agents.list().first_page()
    assert (info.value.type, info.value.message, info.value.request_id) == (
        "invalid_request_error",
        "HTTP 400: not json",
        "req_h",
    )
    assert len(server.requests) == 1
    assert slept == []


def test_retries_connection_errors_then_raises() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Nothing listens on the port any more: every attempt is refused.
    slept: list[float] = []
    with pytest.raises(APIConnectionError):
        client(f"http://127.0.0.1:{port}", slept, max_retries=2).agents.retrieve("agent_x")
    assert len(slept) == 2


def test_retry_delay_honours_retry_after_and_caps_backoff() -> None:
    import httpx

    assert retry_delay(0, httpx.Headers({"retry-after": "2"})) == 2.0
    assert 6.0 <= retry_delay(10, httpx.Headers({"retry-after": "3600"})) <= 8.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_url": "", "api_key": "k"},
        {"base_url": "ftp://x", "api_key": "k"},
        {"base_url": "http://x", "api_key": " "},
        {"base_url": "http://x", "api_key": "k", "max_retries": -1},
    ],
)
def test_the_client_validates_its_options(kwargs: dict[str, object]) -> None:
    with pytest.raises(TypeError):
        Mango(**kwargs)  # type: ignore[arg-type]


def _frames(*events: tuple[int, str]) -> bytes:
    return "".join(
        f"id: {seq}\nevent: {kind}\ndata: {json.dumps({'id': f'sevt_{seq}', 'type': kind})}\n\n"
        for seq, kind in events
    ).encode()


def test_event_stream_reconnects_with_last_event_id_after_a_drop(serve) -> None:
    # First connection: a ping and two events, then the server closes it. Second: a duplicate of event 2
    # (must be skipped), then event 3 and session.deleted, which ends the iteration.
    def replies(n: int) -> Reply:
        headers = {"content-type": "text/event-stream"}
        if n == 1:
            return (
                200,
                headers,
                b"event: ping\ndata: {}\n\n" + _frames((1, "user.message"), (2, "user.message")),
            )
        return 200, headers, _frames((2, "user.message"), (3, "user.interrupt"), (4, "session.deleted"))

    server = serve(replies)
    slept: list[float] = []
    events = list(client(server.url, slept).sessions.events.stream("sesn_1"))
    assert [(e.id, e.event["type"]) for e in events] == [
        ("1", "user.message"),
        ("2", "user.message"),
        ("3", "user.interrupt"),
        ("4", "session.deleted"),
    ]
    assert [r[1] for r in server.requests] == ["/v1/sessions/sesn_1/events/stream"] * 2
    sent = [{k.lower(): v for k, v in r[2].items()} for r in server.requests]
    assert "last-event-id" not in sent[0]
    assert sent[1]["last-event-id"] == "2"
    assert sent[0]["accept"] == "text/event-stream"
    assert len(slept) == 1


def test_event_stream_gives_up_after_max_retries_and_does_not_retry_a_404(serve) -> None:
    server = serve(lambda n: (503, {}, b""))
    slept: list[float] = []
    with pytest.raises(MangoError) as info:
        list(client(server.url, slept, max_retries=2).sessions.events.stream("sesn_1", last_event_id="7"))
    assert info.value.status == 503
    assert len(server.requests) == 3
    assert all({k.lower(): v for k, v in r[2].items()}["last-event-id"] == "7" for r in server.requests)

    missing = serve(
        lambda n: (
            404,
            {},
            b'{"type":"error","error":{"type":"not_found_error","message":"no"},"request_id":"req_9"}',
        )
    )
    with pytest.raises(NotFoundError) as nf:
        list(client(missing.url, slept).sessions.events.stream("sesn_1"))
    assert nf.value.request_id == "req_9"
    assert len(missing.requests) == 1
