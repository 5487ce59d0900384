from __future__ import annotations

import base64

import httpx
import pytest

from mango_sdk import (
    InternalServerError,
    InvalidWorkSecretError,
    MangoError,
    PreconditionFailedError,
    SseFrame,
    SseParser,
    decode_work_secret,
    encode_work_secret,
)
from mango_sdk.errors import error_from_response


def test_error_from_response_reads_the_envelope() -> None:
    body = (
        '{"type":"error","error":{"type":"heartbeat_precondition_failed","message":"stale",'
        '"details":{"current_state":{"state":"active"}}},"request_id":"req_body"}'
    )
    err = error_from_response(412, httpx.Headers({"request-id": "req_header"}), body)
    assert isinstance(err, PreconditionFailedError)
    assert (err.type, err.message, err.request_id) == ("heartbeat_precondition_failed", "stale", "req_body")
    assert err.current_state == {"state": "active"}


def test_error_from_response_falls_back_for_non_envelopes() -> None:
    err = error_from_response(502, httpx.Headers({"request-id": "req_h"}), "<html>bad   gateway</html>")
    assert isinstance(err, InternalServerError)
    assert (err.type, err.message, err.request_id) == (
        "api_error",
        "HTTP 502: <html>bad gateway</html>",
        "req_h",
    )
    other = error_from_response(418, httpx.Headers(), "")
    assert type(other) is MangoError
    assert (other.type, other.message) == ("unknown_error", "HTTP 418")


def test_sse_parser_handles_splits_comments_and_line_endings() -> None:
    parser = SseParser()
    frames: list[SseFrame] = []
    for chunk in [
        ": ping\n\nid: 1\nevent: user.message\nda",
        'ta: {"a":\r',
        "\ndata: 1}\r\n\r",
        "\nevent: ping\ndata: {}\n\n",
        "id: 3\ndata:x\rdata: y\r\r",
        "id: 4\nevent: e\n\n",
        "data: unterminated",
    ]:
        frames += parser.push(chunk)
    assert frames == [
        SseFrame(id="1", event="user.message", data='{"a":\n1}'),
        SseFrame(id=None, event="ping", data="{}"),
        SseFrame(id="3", event="message", data="x\ny"),
    ]


def test_decode_work_secret_round_trips_and_accepts_padding() -> None:
    secret = {"sessions_token": "mango_wt_abc", "api_base_url": "http://127.0.0.1:8080"}
    encoded = encode_work_secret(secret)  # type: ignore[arg-type]
    assert not set(encoded) & set("+/=")
    assert decode_work_secret(encoded) == secret
    padded = base64.urlsafe_b64encode(
        b'{"sessions_token":"mango_wt_abc","api_base_url":"http://127.0.0.1:8080","extra":1}'
    ).decode()
    assert decode_work_secret(padded) == secret


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize(
    ("secret", "reason"),
    [
        ("", "non-empty"),
        ("a+b/", "URL-safe"),
        ("abcde", "length or padding"),
        (_b64(b"\xff\xfe"), "UTF-8 JSON"),
        (_b64(b"[1]"), "JSON object"),
        (_b64(b'{"api_base_url":"http://x"}'), "sessions_token"),
        (_b64(b'{"sessions_token":"t","api_base_url":"ftp://x"}'), "api_base_url"),
    ],
)
def test_decode_work_secret_rejects_bad_input(secret: str, reason: str) -> None:
    with pytest.raises(InvalidWorkSecretError, match=reason):
        decode_work_secret(secret)
