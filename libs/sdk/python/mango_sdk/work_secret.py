"""Decoding the ``secret`` of a polled Work item."""

from __future__ import annotations

import base64
import binascii
import json
import re
from urllib.parse import urlparse

from ._generated.models import WorkSecret

__all__ = ["InvalidWorkSecretError", "WorkSecret", "decode_work_secret", "encode_work_secret"]

_BASE64URL = re.compile(r"^[A-Za-z0-9_-]*={0,2}$")


class InvalidWorkSecretError(ValueError):
    """The secret is not URL-safe base64 of a ``WorkSecret`` JSON object. Never contains the secret."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Invalid Work secret: {message}")


def decode_work_secret(secret: str) -> WorkSecret:
    """Decodes URL-safe base64 (padding optional) of ``{"sessions_token", "api_base_url"}``.

    Raises ``InvalidWorkSecretError`` unless ``sessions_token`` is a non-empty string and ``api_base_url``
    an http(s) URL. Unknown extra fields are ignored.
    """
    if not isinstance(secret, str) or secret == "":
        raise InvalidWorkSecretError("expected a non-empty string")
    if not _BASE64URL.match(secret):
        raise InvalidWorkSecretError("not URL-safe base64 (allowed: A-Z a-z 0-9 - _ and trailing =)")
    unpadded = secret.rstrip("=")
    if len(unpadded) % 4 == 1 or (len(secret) != len(unpadded) and len(secret) % 4 != 0):
        raise InvalidWorkSecretError("base64 length or padding is invalid")
    try:
        raw = base64.urlsafe_b64decode(unpadded + "=" * (-len(unpadded) % 4))
    except (binascii.Error, ValueError) as cause:
        raise InvalidWorkSecretError("not decodable as base64") from cause
    try:
        parsed = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as cause:
        raise InvalidWorkSecretError("payload is not UTF-8 JSON") from cause
    if not isinstance(parsed, dict):
        raise InvalidWorkSecretError("payload is not a JSON object")
    token, base_url = parsed.get("sessions_token"), parsed.get("api_base_url")
    if not isinstance(token, str) or token == "":
        raise InvalidWorkSecretError("sessions_token is missing or not a non-empty string")
    if not isinstance(base_url, str) or not _is_http_url(base_url):
        raise InvalidWorkSecretError("api_base_url is missing or not an http(s) URL")
    return {"sessions_token": token, "api_base_url": base_url}


def encode_work_secret(secret: WorkSecret) -> str:
    """Encodes a ``WorkSecret`` the way the server does (URL-safe base64 without padding)."""
    raw = json.dumps(dict(secret), separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _is_http_url(value: str) -> bool:
    try:
        url = urlparse(value)
    except ValueError:
        return False
    return url.scheme in ("http", "https") and bool(url.netloc)
