// The fallback when the RateLimiter Durable Object cannot be reached. (The
// runtime offers no way to make a bound Durable Object unreachable on
// purpose, so the failing call is injected here; test/rate-limit.test.ts
// covers the object itself.)
import { afterEach, expect, test, vi } from 'vitest';
import { hitOrFallBack } from './rate-limit.js';

afterEach(() => { vi.restoreAllMocks(); });

const unreachable = () => Promise.reject(new Error('Durable Object reset because its code was updated'));

test('an unreachable limiter still limits, counting in the isolate per bucket', async () => {
  const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
  const verdicts = [];
  for (let i = 0; i < 3; i++) verdicts.push(await hitOrFallBack('api', 'api|credential:a', 2, unreachable));
  expect(verdicts.map((v) => [v.allowed, v.limit, v.remaining])).toEqual([[true, 2, 1], [true, 2, 0], [false, 2, 0]]);
  // Another bucket has a window of its own.
  expect((await hitOrFallBack('api', 'api|credential:b', 2, unreachable)).allowed).toBe(true);
  // The failure is logged once per window, not per request.
  expect(logged).toHaveBeenCalledTimes(1);
  expect(String(logged.mock.calls[0]![0])).toMatch(/^rate limiter api unreachable \(Durable Object reset because its code was updated\); counting in this isolate/);
});

test('a reachable limiter answers for itself', async () => {
  const verdict = { allowed: false, limit: 7, remaining: 0, resetAt: Date.now() + 1000 };
  expect(await hitOrFallBack('ses_webhook', 'ses_webhook|ip:x', 7, async () => verdict)).toBe(verdict);
});
