"""One exception class per refusal the API answers with, all under APIError,
carrying what the answer said: its status, its `error` text, its field errors,
and the request id when the API sent one."""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Literal


class APIError(Exception):
    """Every refusal or failure of a request made by this client."""

    def __init__(self, message: str, *, status: int = 0, fields: Mapping[str, str] | None = None,
                 request_id: str | None = None, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        #: The API's `error` text.
        self.message = message
        #: The HTTP status; 0 when no answer arrived (connection failure, timeout).
        self.status = status
        #: Field name -> problem, on validation failures.
        self.fields: dict[str, str] = dict(fields or {})
        #: The `X-Request-Id` the API answered with, where it sent one (name it when reporting a 5xx).
        self.request_id = request_id
        #: The answer's headers, names in lower case (empty when no answer arrived).
        self.headers: dict[str, str] = {k.lower(): v for k, v in (headers or {}).items()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, message={self.message!r})"


class APIConnectionError(APIError):
    """No answer arrived: the connection failed or was reset."""


class APITimeoutError(APIConnectionError):
    """No answer within the timeout."""


class ValidationError(APIError):
    """400: the request was malformed or a field is invalid (`fields` names each)."""


class UnauthorizedError(APIError):
    """401: no credential, or one that is unknown, revoked or expired."""


class ForbiddenError(APIError):
    """403: the credential lacks a permission (`required_permission` names it when the API does) or is otherwise refused."""

    @property
    def required_permissions(self) -> list[str]:
        """Every permission that would have sufficed (`permission a:read or b:read required`)."""
        found = re.search(r"permission (\S+(?: or \S+)*) required", self.message)
        return found.group(1).split(" or ") if found else []

    @property
    def required_permission(self) -> str | None:
        """The `resource:action` the API said is required; the first when it names alternatives."""
        return next(iter(self.required_permissions), None)


class NotFoundError(APIError):
    """404: no such resource in this project."""


class ConflictError(APIError):
    """409: a conflict with the current state (a duplicate, an idempotency key reused with another body)."""


class PayloadTooLargeError(APIError):
    """413: the body is larger than the route accepts."""


class UnprocessableError(APIError):
    """422: well-formed but cannot be processed (a template that does not render)."""


class RateLimitedError(APIError):
    """429: either the request rate (`kind == "request_rate"`, with `retry_after` and the
    RateLimit headers: waiting helps) or the plan's hourly/daily send limit
    (`kind == "plan_limit"`: waiting seconds does not help)."""

    def __init__(self, message: str, **details) -> None:
        super().__init__(message, **details)
        #: Seconds the API asked to wait (`Retry-After`), when it said.
        self.retry_after = parse_retry_after(self.headers.get("retry-after"))
        # A request-rate refusal always names when to retry; a plan limit is a send refused for the hour or day.
        self.kind: Literal["request_rate", "plan_limit"] = (
            "plan_limit" if self.retry_after is None and " email limit reached " in message else "request_rate")
        #: The `RateLimit-Limit`, `-Remaining` and `-Reset` headers as integers, when sent.
        self.rate_limit: dict[str, int] | None = None
        if "ratelimit-limit" in self.headers:
            self.rate_limit = {name: int(self.headers.get(f"ratelimit-{name}", "0") or 0) for name in ("limit", "remaining", "reset")}

    @property
    def is_plan_limit(self) -> bool:
        return self.kind == "plan_limit"


class ServerError(APIError):
    """5xx: the service failed or a dependency did not answer (503 carries `retry_after`)."""

    def __init__(self, message: str, **details) -> None:
        super().__init__(message, **details)
        self.retry_after = parse_retry_after(self.headers.get("retry-after"))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


_CLASS_OF_STATUS: dict[int, type[APIError]] = {
    400: ValidationError, 401: UnauthorizedError, 403: ForbiddenError, 404: NotFoundError,
    409: ConflictError, 413: PayloadTooLargeError, 422: UnprocessableError, 429: RateLimitedError,
}


def error_from_answer(status: int, headers: Mapping[str, str], body: bytes, reason: str = "") -> APIError:
    """The error for a refused answer, its body read as the API's `{"error", "fields"}`."""
    text = body.decode("utf-8", "replace")
    message = text or reason or f"HTTP {status}"
    fields = None
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict):
            if isinstance(parsed.get("error"), str):
                message = parsed["error"]
            if isinstance(parsed.get("fields"), dict):
                fields = parsed["fields"]
    except ValueError:
        pass  # not JSON: the text is the message
    lower = {k.lower(): v for k, v in headers.items()}
    cls = _CLASS_OF_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    return cls(message, status=status, fields=fields, request_id=lower.get("x-request-id"), headers=lower)
