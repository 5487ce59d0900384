"""Mango Python SDK: models generated from openapi.yaml (``mango_sdk.models``) plus a thin client."""

from . import _generated
from ._base import AsyncBinaryResponse, BinaryResponse, StreamEvent
from ._core import (
    SDK_VERSION,
    FileInput,
    ResponseInfo,
    idempotency_key,
    is_idempotency_in_progress,
    is_retryable_status,
    retry_delay,
)
from ._generated import models
from .client import AsyncMango, Mango
from .errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    MangoError,
    NotFoundError,
    PermissionDeniedError,
    PreconditionFailedError,
    RateLimitError,
    RequestTooLargeError,
)
from .pagination import AsyncPaginator, Paginator
from .sse import SseFrame, SseParser
from .webhooks import WebhookVerificationError, verify_webhook
from .work_secret import InvalidWorkSecretError, WorkSecret, decode_work_secret, encode_work_secret

__version__ = SDK_VERSION
__all__ = [
    "SDK_VERSION",
    "APIConnectionError",
    "APITimeoutError",
    "AsyncBinaryResponse",
    "AsyncMango",
    "AsyncPaginator",
    "AuthenticationError",
    "BadRequestError",
    "BinaryResponse",
    "ConflictError",
    "FileInput",
    "InternalServerError",
    "InvalidWorkSecretError",
    "Mango",
    "MangoError",
    "NotFoundError",
    "Paginator",
    "PermissionDeniedError",
    "PreconditionFailedError",
    "RateLimitError",
    "RequestTooLargeError",
    "ResponseInfo",
    "SseFrame",
    "SseParser",
    "StreamEvent",
    "WebhookVerificationError",
    "WorkSecret",
    "_generated",
    "decode_work_secret",
    "encode_work_secret",
    "idempotency_key",
    "is_idempotency_in_progress",
    "is_retryable_status",
    "models",
    "retry_delay",
    "verify_webhook",
]
