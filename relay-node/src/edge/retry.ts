// The edge retry loop: how every caller of the edge waits out a 429, a 5xx or
// a network failure, and gives up at once on anything else.
import { Backoff, sleep, type BackoffOptions } from './backoff.js';
import { EdgeError, EdgeRateLimitedError } from './errors.js';

export interface RetryOptions {
  signal?: AbortSignal;
  backoff?: BackoffOptions;
  /** Told before each wait (for the log). */
  onRetry?: (err: EdgeError, delayMs: number) => void;
}

/**
 * Runs `call` until it succeeds: a 429 waits its Retry-After (or the next
 * backoff step when none is given), a 5xx or network failure waits the next
 * backoff step (1 s doubling to 5 min, jittered). Anything else is thrown
 * at once, and so is the abort of `signal` (as its reason, or an AbortError).
 *
 * @example const answer = await retrying(() => edge.domains(), { signal });
 */
export async function retrying<T>(call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const backoff = new Backoff(options.backoff);
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof EdgeError) || !err.retryable || options.signal?.aborted) throw err;
      const step = backoff.next();
      const delay = err instanceof EdgeRateLimitedError && err.retryAfterMs !== null ? err.retryAfterMs : step;
      options.onRetry?.(err, delay);
      if (!(await sleep(delay, options.signal))) {
        throw options.signal?.reason ?? new DOMException('aborted', 'AbortError');
      }
    }
  }
}
