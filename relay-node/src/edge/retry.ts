// The edge retry loop: how every caller of the edge (the forwarder, the
// outbound claims and reports, the listener certificate) waits out a 429, a
// 5xx or a network failure, and gives up at once on a revoked node.
import { Backoff, sleep, type BackoffOptions } from './backoff.js';
import { EdgeError, EdgeRateLimitedError, isFatalEdgeError } from './errors.js';

export interface RetryOptions {
  /** Shutdown: ends a wait at once, and the call is not made again (its reason is thrown). */
  signal?: AbortSignal;
  /**
   * The waits between tries: 1 s doubling to 5 min by default. A `Backoff` of
   * the caller's keeps counting across calls (a loop that shares one pause
   * among its requests); the caller resets it when the edge answers.
   */
  backoff?: Backoff | BackoffOptions;
  /**
   * Which failures are waited out; anything else is thrown at once. Default:
   * what the edge client marks retryable (429, 5xx, network, timeout). A
   * revoked node or refused credential is thrown whatever this says.
   */
  retryable?: (err: unknown) => boolean;
  /** Told before each wait, with its length (for the log). */
  onRetry?: (err: unknown, delayMs: number) => void;
  /** Lets the caller end a wait early (`resume()`, `wake()`). */
  waits?: RetryWaits;
}

/**
 * The waits of `retrying` that the caller may cut short: `resume()` when the
 * edge is known to answer again (a heartbeat got through) ends a wait after
 * a failure, but not one a 429 asked for; `wake()` ends any wait (one more
 * try now, as a stopping node does with its last reports).
 */
export class RetryWaits {
  private current: { end: () => void; rateLimited: boolean } | null = null;

  /** Ends the current wait unless a 429 asked for it; true when it ended one. */
  resume(): boolean {
    if (!this.current || this.current.rateLimited) return false;
    this.current.end();
    return true;
  }

  /** Ends the current wait, whatever asked for it. */
  wake(): void {
    this.current?.end();
  }

  /** Waits `ms` unless `signal` aborts (false) or the caller ends the wait (true). */
  async wait(ms: number, rateLimited: boolean, signal?: AbortSignal): Promise<boolean> {
    const ended = new AbortController();
    const wait = { end: () => ended.abort(), rateLimited };
    this.current = wait;
    try {
      await sleep(ms, signal ? AbortSignal.any([signal, ended.signal]) : ended.signal);
    } finally {
      if (this.current === wait) this.current = null;
    }
    return !signal?.aborted;
  }
}

const edgeRetryable = (err: unknown) => err instanceof EdgeError && err.retryable;

/**
 * Runs `call` until it succeeds: a 429 waits its Retry-After (or the next
 * backoff step when none is given), any other retryable failure waits the
 * next backoff step (1 s doubling to 5 min, jittered). Anything else is
 * thrown at once, a revoked node always, and so is the abort of `signal` (as
 * its reason, or an AbortError).
 *
 * @example const answer = await retrying(() => edge.domains(), { signal });
 */
export async function retrying<T>(call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const backoff = options.backoff instanceof Backoff ? options.backoff : new Backoff(options.backoff);
  const retryable = options.retryable ?? edgeRetryable;
  const waits = options.waits ?? new RetryWaits();
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (isFatalEdgeError(err) || !retryable(err) || options.signal?.aborted) throw err;
      const rateLimited = err instanceof EdgeRateLimitedError;
      const delay = (rateLimited ? err.retryAfterMs : null) ?? backoff.next();
      options.onRetry?.(err, delay);
      if (!(await waits.wait(delay, rateLimited, options.signal))) {
        throw options.signal?.reason ?? new DOMException('aborted', 'AbortError');
      }
    }
  }
}
