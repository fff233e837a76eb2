"""What needs no stack: the package installs from this folder into a fresh
virtual environment without reaching a package index, and the pieces of the
runtime that are pure functions."""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import typing
import unittest
from pathlib import Path

from . import support  # noqa: F401 (puts this checkout's edgemail first on the path)

import edgemail
from edgemail._errors import error_from_answer

ROOT = Path(__file__).resolve().parent.parent


@unittest.skipUnless(importlib.util.find_spec("pip") and importlib.util.find_spec("venv"),
                     "needs pip and venv for this python3 (Debian: python3-pip, python3-venv)")
class Install(unittest.TestCase):
    def test_pip_installs_the_folder_into_a_fresh_venv_with_no_index(self):
        with tempfile.TemporaryDirectory() as venv:
            # A venv without its own pip (quicker to make); this interpreter's pip installs into it.
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
            python = str(Path(venv) / "bin" / "python")
            pip = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-index",
                                  "--disable-pip-version-check", str(ROOT)],
                                 capture_output=True, text=True)
            self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
            out = subprocess.run([python, "-c", "import edgemail, sys; print(edgemail.__version__, edgemail.__file__)"],
                                 capture_output=True, text=True, cwd=venv, check=True).stdout.split()
            self.assertEqual(out[0], edgemail.VERSION)
            self.assertTrue(out[1].startswith(venv), out[1])


class Pieces(unittest.TestCase):
    def test_verify_webhook_recomputes_the_documented_signature(self):
        body = json.dumps({"event": "email.sent", "data": {"id": "x"}}).encode()
        signature = "sha256=" + hmac.new(b"whsec_k", b"1700000000." + body, hashlib.sha256).hexdigest()
        headers = {"X-Service-Timestamp": "1700000000", "X-Service-Signature": signature}
        self.assertEqual(edgemail.verify_webhook(body, headers, "whsec_k", now=1700000100)["event"], "email.sent")
        self.assertEqual(edgemail.verify_webhook(body, list(headers.items()), "whsec_k", now=1700000100)["data"], {"id": "x"})
        with self.assertRaises(edgemail.WebhookVerificationError):
            edgemail.verify_webhook(body, headers, "whsec_k", now=1700000301)

    def test_refusals_map_to_their_classes(self):
        cases = {400: edgemail.ValidationError, 401: edgemail.UnauthorizedError, 403: edgemail.ForbiddenError,
                 404: edgemail.NotFoundError, 409: edgemail.ConflictError, 413: edgemail.PayloadTooLargeError,
                 422: edgemail.UnprocessableError, 429: edgemail.RateLimitedError, 502: edgemail.ServerError, 418: edgemail.APIError}
        for status, cls in cases.items():
            error = error_from_answer(status, {"X-Request-Id": "r1"}, b'{"error": "no", "fields": {"to": "bad"}}')
            self.assertIs(type(error), cls)
            self.assertEqual((error.status, error.message, error.fields, error.request_id), (status, "no", {"to": "bad"}, "r1"))
        forbidden = error_from_answer(403, {}, b'{"error": "permission inbound:read or emails:read required"}')
        self.assertEqual(forbidden.required_permissions, ["inbound:read", "emails:read"])
        self.assertEqual(edgemail.parse_retry_after("7"), 7)
        self.assertIsNone(edgemail.parse_retry_after("soon"))


    def test_every_generated_type_resolves(self):
        types = edgemail.types
        for name, value in vars(types).items():
            if typing.is_typeddict(value):
                typing.get_type_hints(value)  # raises on a name the module does not define
            elif isinstance(value, str) and name[:1].isupper():
                eval(value, vars(types))  # a quoted alias

    def test_no_answer_within_the_timeout_is_an_api_timeout_error_and_a_get_is_tried_again(self):
        listener = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(listener.close)
        accepted: list[socket.socket] = []

        def accept() -> None:  # takes connections and never answers
            while True:
                try:
                    accepted.append(listener.accept()[0])
                except OSError:
                    return

        threading.Thread(target=accept, daemon=True).start()
        self.addCleanup(lambda: [c.close() for c in accepted])
        client = edgemail.Client("myk_x", f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.3, max_retries=1)
        started = time.monotonic()
        with self.assertRaises(edgemail.APITimeoutError) as e:
            client.domains.list()
        self.assertEqual(e.exception.status, 0)
        self.assertEqual(len(accepted), 2)
        self.assertLess(time.monotonic() - started, 5)


if __name__ == "__main__":
    unittest.main()
