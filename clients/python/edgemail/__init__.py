"""The edgemail API client (Python 3.11+, standard library only).

    import edgemail
    client = edgemail.Client(api_key, "https://mail.example.com")
    client.emails.send({"from": "news@acme.example", "to": ["ann@example.org"], "subject": "Hi", "text": "Hello"})
    for message in client.inbound_emails.list(status="received"):
        ...
"""

from ._client import Admin, Client, Edgemail
from ._errors import (
    APIConnectionError, APIError, APITimeoutError, ConflictError, ForbiddenError, NotFoundError, PayloadTooLargeError,
    RateLimitedError, ServerError, UnauthorizedError, UnprocessableError, ValidationError, parse_retry_after,
)
from ._generated import types
from ._paging import CursorPaging, OffsetPaging, Paginated
from ._transport import Download, Opener, RequestOptions, Transport
from ._version import VERSION
from ._webhooks import WebhookVerificationError, verify_webhook

__version__ = VERSION
__all__ = [
    "Admin", "Client", "Edgemail", "APIError", "APIConnectionError", "APITimeoutError", "ValidationError",
    "UnauthorizedError", "ForbiddenError", "NotFoundError", "ConflictError", "PayloadTooLargeError",
    "UnprocessableError", "RateLimitedError", "ServerError", "parse_retry_after", "types", "Paginated",
    "CursorPaging", "OffsetPaging", "Download", "Opener", "RequestOptions", "Transport", "VERSION",
    "WebhookVerificationError", "verify_webhook",
]
