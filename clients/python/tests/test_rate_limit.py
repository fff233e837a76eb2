"""Against a stack whose API limit is a few requests a minute (issue 28, "Errors"
and "Transport"): a request-rate 429 with Retry-After and the RateLimit
headers, the client's retry waiting out exactly what Retry-After said; and a
5xx (the stack's DNS-over-HTTPS resolver is out of reach, so a webhook's host
cannot be checked: 503) that a POST without an Idempotency-Key never retries."""

from __future__ import annotations

import time
import unittest

from .support import RecordingOpener, env, needs

import edgemail

WINDOW = 60.0


def client(key: str, **options) -> edgemail.Client:
    return edgemail.Client(env(key), env("EDGEMAIL_RATE_BASE_URL"), **options)


@needs("EDGEMAIL_RATE_BASE_URL", "EDGEMAIL_RATE_KEY", "EDGEMAIL_OUTAGE_KEY")
class RateLimits(unittest.TestCase):
    def test_a_5xx_is_a_server_error_and_a_keyless_post_is_tried_once(self):
        once = RecordingOpener()
        with self.assertRaises(edgemail.ServerError) as e:
            client("EDGEMAIL_OUTAGE_KEY", opener=once, max_retries=3).webhooks.create(
                {"url": "https://hooks.example.org/edgemail", "events": ["*"]})
        self.assertEqual(e.exception.status, 503)
        self.assertRegex(e.exception.message, r"^could not check url: ")
        self.assertEqual(len(once.requests), 1)

    def test_a_request_rate_429_carries_retry_after_and_the_retry_waits_it_out(self):
        per_minute = int(env("EDGEMAIL_RATE_PER_MINUTE"))
        # Fixed one-minute windows: the burst, its refusal and the retrying call's first attempt must share one.
        left = WINDOW - time.time() % WINDOW
        if left < 8:
            time.sleep(left + 0.5)

        plain = client("EDGEMAIL_RATE_KEY", max_retries=0)
        for _ in range(per_minute):
            plain.api_keys.list()
        with self.assertRaises(edgemail.RateLimitedError) as e:
            plain.api_keys.list()
        limited = e.exception
        self.assertEqual(limited.kind, "request_rate")
        self.assertFalse(limited.is_plan_limit)
        self.assertEqual(limited.message, f"rate limit exceeded: {per_minute} requests per minute")
        self.assertGreaterEqual(limited.retry_after, 1)
        self.assertLessEqual(limited.retry_after, WINDOW)
        self.assertEqual(limited.rate_limit["limit"], per_minute)
        self.assertEqual(limited.rate_limit["remaining"], 0)

        # The same call with retries: the second attempt leaves no sooner than Retry-After said, and succeeds in the next window.
        timed = RecordingOpener()
        answer = client("EDGEMAIL_RATE_KEY", opener=timed, max_retries=3, max_retry_after=90).api_keys.list()
        self.assertGreater(len(answer["api_keys"]), 0)
        self.assertEqual(len(timed.requests), 2)
        asked = float(timed.retry_after[0])
        self.assertGreaterEqual(asked, 1)
        self.assertGreaterEqual(timed.sent_at[1] - timed.sent_at[0], asked - 0.05)


if __name__ == "__main__":
    unittest.main()
