"""The two clients: `Client` for a project (API key, `myk_…`) and `Admin` for
the platform operator's routes under /api/v1/admin (platform credential, `mya_…`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._generated.admin import AdminResources
from ._generated.api import ClientResources
from ._transport import Download, Opener, RequestOptions, Transport


class _Base:
    _transport: Transport

    def __init__(self, api_key: str, base_url: str, *, timeout: float = 60.0, max_retries: int = 2,
                 max_retry_after: float = 60.0, headers: Mapping[str, str] | None = None, opener: Opener | None = None) -> None:
        """`base_url` is where the API is served (`https://mail.example.com`; the `/api/v1/…` paths are appended).
        `timeout`: seconds for the connection and each read; `max_retries`: retries where safe;
        `max_retry_after`: the longest `Retry-After` waited out by the client itself (a longer one is raised);
        `headers`: sent with every request; `opener`: a `urllib.request.build_opener(...)` of your own (proxy, TLS, tests)."""
        super().__init__(Transport(api_key, base_url, timeout=timeout, max_retries=max_retries,  # type: ignore[call-arg]
                                   max_retry_after=max_retry_after, headers=headers, opener=opener))

    def request(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
                idempotency_key: str | None = None, options: RequestOptions | None = None) -> Download:
        """Any request by hand (a route newer than this client), with the client's credential, timeout and
        retry rules: the unread 2xx answer (`json.load(answer)`); refusals raise as usual."""
        return self._transport.send(method, path, query=query, body=body, idempotency_key=idempotency_key,
                                    accept="application/json", options=options)


class Client(_Base, ClientResources):
    """The project API with a project key (`myk_…`): `Client(api_key, base_url)`."""


class Admin(_Base, AdminResources):
    """The platform operator's API under /api/v1/admin, with a platform credential (`mya_…`)."""


#: The project client under the product's name.
Edgemail = Client
