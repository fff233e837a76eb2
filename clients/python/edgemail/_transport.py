"""The one place requests are made: URL and headers, the timeout, retries with
backoff and jitter where a retry is safe, and the mapping of refusals to
exception classes. Generated resource methods describe a request and call here."""

from __future__ import annotations

import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol, TypeAlias, TypedDict

from ._errors import APIConnectionError, APIError, APITimeoutError, RateLimitedError, ServerError, error_from_answer
from ._paging import Paginated, PagingRule
from ._version import VERSION

#: A binary download (raw message, attachment): the HTTP answer itself, a file-like object read as it
#: arrives (`read(n)`, `shutil.copyfileobj`, `with`). Close it when done.
Download: TypeAlias = http.client.HTTPResponse

#: Methods whose repetition has the effect of one call (POST and PATCH are not among them).
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE"})
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class RequestOptions(TypedDict, total=False):
    """Keyword arguments every method takes, over the client's own settings for this one call."""

    #: Seconds to wait for the connection and for each read of the answer.
    timeout: float
    #: Retries after the first attempt, where a retry is safe.
    max_retries: int
    #: Headers sent with this request.
    headers: Mapping[str, str]


class Opener(Protocol):
    """What `urllib.request.build_opener()` returns: anything with its `open(request, timeout=…)`.
    Pass your own for a proxy (`build_opener(ProxyHandler(...))`), custom TLS, or a test double."""

    def open(self, fullurl: urllib.request.Request, data: bytes | None = None, timeout: float = ...) -> Any: ...


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def _segment(value: object) -> str:
    """A path parameter, escaped as one path segment."""
    return urllib.parse.quote(str(value), safe="")


def _query_value(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


class Transport:
    def __init__(self, api_key: str, base_url: str, *, timeout: float = 60.0, max_retries: int = 2,
                 max_retry_after: float = 60.0, headers: Mapping[str, str] | None = None,
                 opener: Opener | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        if not api_key:
            raise ValueError("api_key is required")
        if not base_url:
            raise ValueError("base_url is required")
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_after = max_retry_after
        self.headers = dict(headers or {})
        self.opener: Opener = opener or urllib.request.build_opener()
        self._sleep = sleep

    def json(self, method: str, path: str, **request: Any) -> Any:
        with self.send(method, path, accept="application/json", **request) as response:
            return json.loads(response.read() or b"null")

    def empty(self, method: str, path: str, **request: Any) -> None:
        with self.send(method, path, accept="application/json", **request) as response:
            response.read()

    def stream(self, method: str, path: str, **request: Any) -> Download:
        """The answer itself, unread: a 25 MB message is never held whole."""
        return self.send(method, path, accept="*/*", **request)

    def ndjson(self, method: str, path: str, **request: Any) -> Iterator[Any]:
        """One parsed value per line of an `application/x-ndjson` answer, read as it streams (the request is made on the first `next`)."""
        with self.send(method, path, accept="application/x-ndjson", **request) as response:
            for line in response:
                if line.strip():
                    yield json.loads(line)

    def paginate(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
                 paging: PagingRule, **request: Any) -> Paginated[Any, Any]:
        return Paginated(lambda q: self.json(method, path, query=q, **request), dict(query or {}), paging)

    def send(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
             idempotency_key: str | None = None, accept: str = "application/json",
             options: RequestOptions | None = None) -> Download:
        """Makes the request, retrying where safe; returns a 2xx answer (unread) or raises the refusal's class."""
        options = options or {}
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "User-Agent": f"edgemail-python/{VERSION}",
            "Accept": accept,
            **self.headers,
            **options.get("headers", {}),
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        retry_safe = method in IDEMPOTENT or "Idempotency-Key" in headers
        max_retries = options.get("max_retries", self.max_retries) if retry_safe else 0
        timeout = options.get("timeout", self.timeout)
        url = self._url(path, query)

        attempt = 0
        while True:
            failure = self._attempt(urllib.request.Request(url, data=data, headers=headers, method=method), timeout)
            if not isinstance(failure, APIError):
                return failure
            if isinstance(failure, RateLimitedError) and failure.is_plan_limit:
                raise failure  # waiting seconds does not lift a plan's hourly or daily limit
            if not isinstance(failure, APIConnectionError) and failure.status not in RETRY_STATUSES:
                raise failure
            if attempt >= max_retries:
                raise failure
            asked = failure.retry_after if isinstance(failure, (RateLimitedError, ServerError)) else None
            if asked is not None and asked > self.max_retry_after:
                raise failure
            self._sleep(asked if asked is not None else backoff(attempt))
            attempt += 1

    def _attempt(self, request: urllib.request.Request, timeout: float) -> Download | APIError:
        """One try: the 2xx answer, or the error it amounts to (returned, for `send` to decide on a retry)."""
        try:
            response = self.opener.open(request, timeout=timeout)
        except urllib.error.HTTPError as e:  # urllib's default opener raises the non-2xx answers
            with e:
                return error_from_answer(e.code, dict(e.headers.items()), e.read(), e.reason)
        except (TimeoutError, socket.timeout) as e:
            return APITimeoutError(f"no answer within {timeout} s: {e}")
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                return APITimeoutError(f"no answer within {timeout} s: {e.reason}")
            return APIConnectionError(f"connection failed: {e.reason}")
        except (OSError, http.client.HTTPException) as e:
            return APIConnectionError(f"connection failed: {e!r}")
        if 200 <= response.status < 300:
            return response
        with response:  # an opener without urllib's error processing hands refusals back as answers
            return error_from_answer(response.status, dict(response.headers.items()), response.read(), response.reason)

    def _url(self, path: str, query: Mapping[str, Any] | None) -> str:
        pairs = []
        for name, value in (query or {}).items():
            if value is None:
                continue
            for v in value if isinstance(value, (list, tuple)) else [value]:
                pairs.append((name, _query_value(v)))
        return self.base_url + path + (f"?{urllib.parse.urlencode(pairs)}" if pairs else "")


def backoff(attempt: int) -> float:
    """Exponential backoff from half a second, capped at 8 s, with up to 25 % jitter below it."""
    return min(8.0, 0.5 * 2 ** attempt) * (1 - random.random() * 0.25)
