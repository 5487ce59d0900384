"""Typed errors: every failed call raises a ``MangoError`` subclass carrying the error envelope."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

__all__ = [
    "APIConnectionError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "InternalServerError",
    "MangoError",
    "NotFoundError",
    "PermissionDeniedError",
    "PreconditionFailedError",
    "RateLimitError",
    "RequestTooLargeError",
    "error_from_response",
]


class MangoError(Exception):
    """Base class of every error raised by a Mango API call.

    For HTTP errors, ``status`` is the response status and ``type``, ``message``, ``details`` and
    ``request_id`` come from the error envelope (``{type:"error", error:{type, message, details?},
    request_id}``), falling back to the ``request-id`` header when the body is not an envelope.
    """

    def __init__(
        self,
        message: str,
        *,
        type: str,
        status: int | None = None,
        request_id: str | None = None,
        details: dict[str, Any] | None = None,
        headers: httpx.Headers | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.type = type
        self.status = status
        self.request_id = request_id
        self.details = details
        self.headers = headers

    def __str__(self) -> str:
        prefix = f"{self.status} {self.type}" if self.status is not None else self.type
        suffix = f" (request {self.request_id})" if self.request_id else ""
        return f"{prefix}: {self.message}{suffix}"


class BadRequestError(MangoError):
    """400: malformed or invalid request (``invalid_request_error``)."""


class AuthenticationError(MangoError):
    """401: missing, malformed, unknown, revoked or expired credential."""


class PermissionDeniedError(MangoError):
    """403: the credential's kind or scope does not allow the operation."""


class NotFoundError(MangoError):
    """404: unknown resource, wrong id prefix, or another workspace's resource."""


class ConflictError(MangoError):
    """409: state conflict (version mismatch, duplicate name, archived object, Work state, ...)."""


class PreconditionFailedError(MangoError):
    """412: heartbeat precondition failed; ``current_state`` is the server's view of the lease."""

    @property
    def current_state(self) -> dict[str, Any] | None:
        state = (self.details or {}).get("current_state")
        return state if isinstance(state, dict) else None


class RequestTooLargeError(MangoError):
    """413: the request body exceeds the server's limit."""


class RateLimitError(MangoError):
    """429: rate limited."""


class InternalServerError(MangoError):
    """5xx: unexpected server error or an unavailable upstream."""


class APIConnectionError(MangoError):
    """No usable response: the connection failed, was reset, or timed out."""

    def __init__(self, message: str, *, type: str = "connection_error") -> None:
        super().__init__(message, type=type)


class APITimeoutError(APIConnectionError):
    """The request did not complete within the timeout."""


_DEFAULT_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "invalid_request_error",
    412: "heartbeat_precondition_failed",
    413: "request_too_large",
    429: "rate_limit_error",
}

_CLASS_BY_STATUS: dict[int, type[MangoError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    412: PreconditionFailedError,
    413: RequestTooLargeError,
    429: RateLimitError,
}


def error_from_response(status: int, headers: httpx.Headers, body: str) -> MangoError:
    """Builds the typed error for a non-2xx response from its status, headers and raw body text."""
    try:
        parsed: Any = json.loads(body) if body else None
    except ValueError:
        parsed = None
    envelope: Mapping[str, Any] = (
        parsed if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) else {}
    )
    error: Mapping[str, Any] = envelope.get("error", {})
    error_type = error.get("type")
    if not isinstance(error_type, str):
        error_type = _DEFAULT_TYPE_BY_STATUS.get(status, "api_error" if status >= 500 else "unknown_error")
    message = error.get("message")
    if not isinstance(message, str) or not message:
        snippet = " ".join(body.split())[:200]
        message = f"HTTP {status}: {snippet}" if snippet else f"HTTP {status}"
    details = error.get("details")
    request_id = envelope.get("request_id")
    if not isinstance(request_id, str):
        request_id = headers.get("request-id")
    cls = _CLASS_BY_STATUS.get(status, InternalServerError if status >= 500 else MangoError)
    return cls(
        message,
        type=error_type,
        status=status,
        request_id=request_id,
        details=details if isinstance(details, dict) else None,
        headers=headers,
    )
