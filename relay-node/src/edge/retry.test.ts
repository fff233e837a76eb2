// The one retry loop's options, with the failures thrown directly (the edge
// client's typing of real HTTP answers is tested in client.test.ts).
import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';
import { EdgeRateLimitedError, EdgeRefusedError, EdgeUnavailableError, NodeRevokedError } from './errors.js';
import { retrying, RetryWaits } from './retry.js';

const down = () => new EdgeUnavailableError('GET /relay/v1/domains', 503, 'down');
/** A call that fails with each of `failures` in turn, then answers 'ok'. */
function failing(...failures: unknown[]) {
  const calls: number[] = [];
  return { calls, call: async () => {
    calls.push(Date.now());
    if (calls.length <= failures.length) throw failures[calls.length - 1];
    return 'ok';
  } };
}

describe('retrying', () => {
  it('resume() ends a wait after an unreachable edge at once, but not the wait a 429 asked for', async () => {
    const waits = new RetryWaits();
    const ended: boolean[] = [];
    const { calls, call } = failing(down(), new EdgeRateLimitedError('GET /relay/v1/domains', 300));
    // Without resume() the first wait is a minute: the test would time out.
    const answer = await retrying(call, { backoff: { initialMs: 60_000, maxMs: 60_000 }, waits, onRetry: () => setTimeout(() => ended.push(waits.resume()), 20) });
    expect(answer).toBe('ok');
    expect(ended).toEqual([true, false]);
    expect(calls[2]! - calls[1]!).toBeGreaterThanOrEqual(290);
  });

  it('wake() ends any wait, a 429 too', async () => {
    const waits = new RetryWaits();
    const { calls, call } = failing(new EdgeRateLimitedError('GET /relay/v1/domains', 60_000));
    // A minute's Retry-After: only wake() lets this finish within the test's time.
    expect(await retrying(call, { waits, onRetry: () => setTimeout(() => waits.wake(), 20) })).toBe('ok');
    expect(calls).toHaveLength(2);
    expect(waits.resume()).toBe(false); // nothing left to end
  });

  it('a Backoff of the caller keeps counting across calls; a Retry-After takes no step', async () => {
    const backoff = new Backoff({ initialMs: 10, maxMs: 1000, random: () => 0.999 });
    const seen: number[] = [];
    const onRetry = (_err: unknown, ms: number) => seen.push(ms);
    await retrying(failing(down(), new EdgeRateLimitedError('r', 5)).call, { backoff, onRetry });
    await retrying(failing(down()).call, { backoff, onRetry });
    expect(seen).toEqual([10, 5, 20]);
  });

  it('retryable chooses what is waited out; a revoked node is thrown whatever it says', async () => {
    const refused = new EdgeRefusedError('r', 404, 'no such route');
    expect(await retrying(failing(refused, new Error('disk')).call, { backoff: { initialMs: 1 }, retryable: () => true })).toBe('ok');
    await expect(retrying(failing(refused).call, { backoff: { initialMs: 1 } })).rejects.toBe(refused);
    await expect(retrying(failing(down()).call, { backoff: { initialMs: 1 }, retryable: () => false })).rejects.toBeInstanceOf(EdgeUnavailableError);
    const revoked = new NodeRevokedError('r');
    const { calls, call } = failing(revoked);
    await expect(retrying(call, { backoff: { initialMs: 1 }, retryable: () => true })).rejects.toBe(revoked);
    expect(calls).toHaveLength(1);
  });

  it('a shutdown during the wait throws its reason and makes no further call', async () => {
    const stop = new AbortController();
    const { calls, call } = failing(down());
    const done = retrying(call, { signal: stop.signal, backoff: { initialMs: 60_000 }, onRetry: () => setTimeout(() => stop.abort(new Error('stopping')), 20) });
    await expect(done).rejects.toThrow('stopping');
    expect(calls).toHaveLength(1);
  });
});
