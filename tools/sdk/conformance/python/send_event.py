"""Sends one user.message with the Python SDK (its default retries and Idempotency-Key) and prints what
the SDK saw as JSON: apps/orchestrator/test/idempotent-retries.e2e-spec.ts runs it through a proxy that
cuts the first response after its headers. Reads MANGO_BASE_URL, MANGO_API_KEY, MANGO_SESSION_ID and
MANGO_TEXT."""

from __future__ import annotations

import json
import os

from mango_sdk import Mango, ResponseInfo

seen: list[ResponseInfo] = []
client = Mango(
    base_url=os.environ["MANGO_BASE_URL"], api_key=os.environ["MANGO_API_KEY"], on_response=seen.append
)
message = {"type": "user.message", "content": [{"type": "text", "text": os.environ["MANGO_TEXT"]}]}
sent = client.sessions.events.send(os.environ["MANGO_SESSION_ID"], {"events": [message]})
info = seen[-1]
print(
    json.dumps(
        {
            "events": len(sent["data"]),
            "replayed": info.replayed,
            "request_id": info.request_id,
            "idempotency_key": info.idempotency_key,
        }
    )
)
