"""verify_webhook against the Standard Webhooks specification example."""

from __future__ import annotations

import base64

import pytest

from mango_sdk import WebhookVerificationError, verify_webhook

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = '{"test": 2432232314}'
HEADERS = {
    "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
    "webhook-timestamp": "1614265330",
    "webhook-signature": "v1,bm9ldHRoZXNpZ25hdHVyZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
}
NOW = 1614265330


def test_accepts_the_specification_example() -> None:
    assert verify_webhook(BODY, HEADERS, SECRET, now=NOW) == {"test": 2432232314}
    upper = {k.upper(): v for k, v in HEADERS.items()}
    assert verify_webhook(BODY.encode(), upper, SECRET, now=NOW + 299) == {"test": 2432232314}


@pytest.mark.parametrize(
    ("body", "headers", "secret", "now", "reason"),
    [
        ('{"test": 2432232315}', HEADERS, SECRET, NOW, "signature"),
        (BODY, {**HEADERS, "webhook-id": "msg_other"}, SECRET, NOW, "signature"),
        (BODY, HEADERS, "whsec_" + base64.b64encode(b"another key").decode(), NOW, "signature"),
        (BODY, HEADERS, SECRET, NOW + 301, "tolerance"),
        (BODY, HEADERS, SECRET, NOW - 301, "tolerance"),
        (BODY, {k: v for k, v in HEADERS.items() if k != "webhook-id"}, SECRET, NOW, "missing"),
    ],
)
def test_rejects_tampering_staleness_and_missing_headers(body, headers, secret, now, reason) -> None:
    with pytest.raises(WebhookVerificationError, match=reason):
        verify_webhook(body, headers, secret, now=now)
