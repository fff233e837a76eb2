"""Checks that a webhook request came from the service: the HMAC-SHA256 under
the webhook's secret of `<X-Service-Timestamp>.<raw body>`, sent as
`X-Service-Signature: sha256=<hex>`, with a timestamp near now (a replay of an
old request is refused). Compared in constant time (`hmac.compare_digest`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any


class WebhookVerificationError(Exception):
    """The request is not a genuine, fresh webhook delivery: answer it with 400 and ignore it."""


def _header(headers: Mapping[str, Any] | Iterable[tuple[str, Any]], name: str) -> str | None:
    items = headers.items() if hasattr(headers, "items") else headers
    for key, value in items:
        if key.lower() == name:
            return value[0] if isinstance(value, (list, tuple)) else value
    return None


def verify_webhook(payload: bytes | str, headers: Mapping[str, Any], secret: str, *,
                   tolerance: float = 300, now: float | None = None) -> dict[str, Any]:
    """The parsed event when the signature and timestamp check out; raises WebhookVerificationError otherwise.

    `payload` is the body exactly as received (bytes, or the undecoded text), never re-encoded JSON;
    `headers` the request's headers (a dict, `http.server`'s `self.headers`, WSGI-style pairs);
    `tolerance` how far the timestamp may be from now, in seconds.
    """
    timestamp = _header(headers, "x-service-timestamp")
    signature = _header(headers, "x-service-signature")
    if not timestamp or not re.fullmatch(r"\d+", timestamp):
        raise WebhookVerificationError("missing or malformed X-Service-Timestamp")
    given = re.fullmatch(r"sha256=([0-9a-fA-F]{64})", signature or "")
    if not given:
        raise WebhookVerificationError("missing or malformed X-Service-Signature")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise WebhookVerificationError("timestamp outside the tolerance")
    body = payload.encode() if isinstance(payload, str) else bytes(payload)
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, given.group(1).lower()):
        raise WebhookVerificationError("signature does not match")
    return json.loads(body)
