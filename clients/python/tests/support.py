"""What the suites share: the stack's coordinates from the environment (set by
test/client-python.test.ts), and openers that watch or disturb the wire."""

from __future__ import annotations

import os
import sys
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's edgemail, installed or not

import edgemail  # noqa: E402


def env(name: str) -> str:
    return os.environ[name]


def needs(*names: str):
    """Skips a suite run without the stack (by hand, outside test/client-python.test.ts), naming what is missing."""
    missing = [n for n in names if not os.environ.get(n)]
    return unittest.skipIf(bool(missing), f"needs {', '.join(missing)} (run by test/client-python.test.ts against a stack)")


def header(request: urllib.request.Request, name: str) -> str | None:
    return next((v for k, v in request.header_items() if k.lower() == name.lower()), None)


class RecordingOpener:
    """Passes every request to urllib's own opener and keeps it with when it left and the answer's
    Retry-After; `drop_answers` loses that many answers after the server has handled the request."""

    def __init__(self, drop_answers: int = 0) -> None:
        self.inner = urllib.request.build_opener()
        self.requests: list[urllib.request.Request] = []
        self.sent_at: list[float] = []
        self.retry_after: list[str | None] = []
        self.drops = drop_answers

    def open(self, request, data=None, timeout=None):
        self.requests.append(request)
        self.sent_at.append(time.monotonic())
        try:
            response = self.inner.open(request, timeout=timeout)
        except urllib.error.HTTPError as e:
            self.retry_after.append(e.headers.get("retry-after"))
            raise
        self.retry_after.append(response.headers.get("retry-after"))
        if self.drops > 0:
            self.drops -= 1
            with response:
                response.read()  # the server answered; the client never sees it
            raise ConnectionResetError(104, "Connection reset by peer")
        return response


def client(key: str | None = None, **options) -> edgemail.Client:
    return edgemail.Client(key or env("EDGEMAIL_KEY"), env("EDGEMAIL_BASE_URL"), **options)
