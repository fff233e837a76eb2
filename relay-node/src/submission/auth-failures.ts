// Failed AUTH attempts per client address (`submission.max_auth_failures` per
// `submission.auth_failure_window`): a password guesser gets `535 5.7.8` that
// many times, then `421 4.7.0` and the door closed (new sessions too) until
// its window ends. Fixed windows in process memory, like the session rate:
// with several nodes the ceiling is the value times the nodes.
import { addressBucket, FixedWindows, LruCache } from '@edgemail/shared';

export interface AuthFailures {
  /** Counts one failed AUTH from `address`; true when it is one too many (answer 421 and close). */
  fail(address: string, now?: number): boolean;
  /** Whether `address` is shut out now (it went past the limit in the current window). */
  blocked(address: string, now?: number): boolean;
}

/**
 * IPv4 addresses alone, IPv6 by /64; `max` 0 never blocks. `capacity` bounds
 * memory: past it the least recently seen address is forgotten, which can only
 * let a guesser try a few more times, never shut out anyone else.
 *
 * @example const failures = createAuthFailures(10, 900_000); if (failures.fail(ip)) reply421();
 */
export function createAuthFailures(max: number, windowMs: number, capacity = 100_000): AuthFailures {
  if (max <= 0) return { fail: () => false, blocked: () => false };
  const windows = new FixedWindows(capacity);
  const blockedUntil = new LruCache<string, number>(capacity);
  return {
    fail(address, now = Date.now()) {
      const bucket = addressBucket(address);
      const verdict = windows.hit(bucket, max, windowMs, now);
      if (verdict.allowed) return false;
      blockedUntil.set(bucket, verdict.resetAt);
      return true;
    },
    blocked(address, now = Date.now()) {
      const until = blockedUntil.get(addressBucket(address));
      return until !== undefined && until > now;
    },
  };
}
