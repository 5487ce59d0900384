"""Standard Webhooks verification for webhook deliveries (``webhook-id``, ``webhook-timestamp``,
``webhook-signature``; the key is the base64 after ``whsec_``)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

__all__ = ["WebhookVerificationError", "verify_webhook"]

DEFAULT_TOLERANCE = 300.0


class WebhookVerificationError(Exception):
    """A delivery whose signature, timestamp or headers do not verify."""


def verify_webhook(
    body: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> Any:
    """Verifies one delivery and returns its parsed JSON body. Pass the raw body exactly as received."""
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id, timestamp, signatures = (
        lower.get("webhook-id"),
        lower.get("webhook-timestamp"),
        lower.get("webhook-signature"),
    )
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-* headers")
    if not timestamp.isdigit():
        raise WebhookVerificationError("invalid webhook-timestamp")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise WebhookVerificationError("webhook-timestamp outside the tolerance")
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WebhookVerificationError("the signing secret is not base64") from exc
    if not key:
        raise WebhookVerificationError("empty signing secret")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest()
    for entry in signatures.split(" "):
        version, _, sig = entry.partition(",")
        if version != "v1" or not sig:
            continue
        try:
            given = base64.b64decode(sig)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(given, expected):
            try:
                return json.loads(raw)
            except ValueError as exc:
                raise WebhookVerificationError("the webhook body is not JSON") from exc
    raise WebhookVerificationError("no matching webhook-signature")
