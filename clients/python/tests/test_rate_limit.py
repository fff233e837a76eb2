"""Against a stack whose API limit is a few requests a minute (issue 28, "Errors"
and "Transport"): a request-rate 429 with Retry-After and the RateLimit
headers, the client's retry waiting exactly what Retry-After said; and a
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

    def test_a_request_rate_429_carries_retry_after_and_the_retry_waits_exactly_that(self):
        per_minute = int(env("EDGEMAIL_RATE_PER_MINUTE"))
        # Fixed one-minute windows: the burst and the retrying calls below must share one.
        left = WINDOW - time.time() % WINDOW
        if left < 5:
            time.sleep(left + 0.2)

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

        # The same call with a retry: the client sleeps exactly what Retry-After said, then asks again. (The sleep
        # is recorded, not slept: the window may have most of a minute left, and time.sleep is not under test.)
        timed = RecordingOpener()
        retrying = client("EDGEMAIL_RATE_KEY", opener=timed, max_retries=1)
        slept: list[float] = []
        retrying._transport._sleep = slept.append
        with self.assertRaises(edgemail.RateLimitedError):
            retrying.api_keys.list()
        self.assertEqual(len(timed.requests), 2)
        self.assertEqual(slept, [float(timed.retry_after[0])])

        # A Retry-After longer than the client will wait out is raised at once.
        impatient = RecordingOpener()
        with self.assertRaises(edgemail.RateLimitedError):
            client("EDGEMAIL_RATE_KEY", opener=impatient, max_retries=3, max_retry_after=0.5).api_keys.list()
        self.assertEqual(len(impatient.requests), 1)

if __name__ == "__main__":
    unittest.main()
