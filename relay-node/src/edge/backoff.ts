// Capped exponential backoff with jitter, and a sleep that an abort ends: the
// node's one way of waiting before it asks the edge again.

export interface BackoffOptions {
  /** The first delay's ceiling, in ms. Default 1000. */
  initialMs?: number;
  /** The largest delay, in ms. Default 300000 (5 minutes). */
  maxMs?: number;
  /** A number in [0, 1); `Math.random` by default (tests pass their own). */
  random?: () => number;
}

const DEFAULT_INITIAL_MS = 1000;
const DEFAULT_MAX_MS = 5 * 60_000;

/**
 * The delay before retry number `attempt` (0 for the first retry): the
 * ceiling doubles from `initialMs` up to `maxMs`, and the delay is drawn
 * between half the ceiling and the ceiling ("equal jitter"), so nodes that
 * failed together do not come back together, yet each still waits a while.
 *
 * @example backoffDelay(0) // 500..1000; backoffDelay(20) // 150000..300000
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const initial = options.initialMs ?? DEFAULT_INITIAL_MS;
  const max = options.maxMs ?? DEFAULT_MAX_MS;
  const random = options.random ?? Math.random;
  // 2 ** attempt overflows to Infinity long after the cap: Math.min handles it.
  const ceiling = Math.min(max, initial * 2 ** Math.max(0, attempt));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * A retry counter: `next()` gives the next delay and counts the attempt,
 * `reset()` after a success starts again from `initialMs`.
 *
 * @example
 * const backoff = new Backoff();
 * for (;;) { try { return await call(); } catch { await sleep(backoff.next(), signal); } }
 */
export class Backoff {
  attempt = 0;
  constructor(private readonly options: BackoffOptions = {}) {}

  next(): number {
    return backoffDelay(this.attempt++, this.options);
  }

  reset(): void {
    this.attempt = 0;
  }
}

/**
 * Waits `ms`; resolves early (to false) when `signal` aborts, so a stopping
 * node never sits out a five-minute backoff. True when the full time passed.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, Math.max(0, ms));
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
