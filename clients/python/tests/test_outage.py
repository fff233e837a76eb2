"""With the stack's database out of reach (test/client-python.test.ts closes its
bridge before this suite runs), every route answers 503 with Retry-After and an
X-Request-Id: a ServerError carrying both; a GET is retried after exactly the
Retry-After, a POST without an Idempotency-Key is tried once."""

from __future__ import annotations

import unittest

from .support import RecordingOpener, env, needs

import edgemail


@needs("EDGEMAIL_OUTAGE_BASE_URL", "EDGEMAIL_OUTAGE_KEY")
class DatabaseOutage(unittest.TestCase):
    def client(self, opener: RecordingOpener, max_retries: int) -> edgemail.Client:
        return edgemail.Client(env("EDGEMAIL_OUTAGE_KEY"), env("EDGEMAIL_OUTAGE_BASE_URL"), opener=opener, max_retries=max_retries)

    def test_a_get_is_retried_after_retry_after_and_the_error_names_the_request(self):
        retried = RecordingOpener()
        with self.assertRaises(edgemail.ServerError) as e:
            self.client(retried, max_retries=1).domains.list()
        self.assertEqual(e.exception.status, 503)
        self.assertEqual(e.exception.message, "service temporarily unavailable: the database did not answer; retry later")
        self.assertEqual(e.exception.retry_after, 5)
        self.assertRegex(e.exception.request_id or "", r"\S")
        self.assertEqual(len(retried.requests), 2)
        self.assertGreaterEqual(retried.sent_at[1] - retried.sent_at[0], 5 - 0.05)

    def test_a_post_without_an_idempotency_key_is_tried_once(self):
        once = RecordingOpener()
        with self.assertRaises(edgemail.ServerError):
            self.client(once, max_retries=3).webhooks.create({"url": "https://hooks.example.org/edgemail", "events": ["*"]})
        self.assertEqual(len(once.requests), 1)


if __name__ == "__main__":
    unittest.main()
