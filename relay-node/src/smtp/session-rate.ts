// New SMTP sessions per client address per minute (the spec's
// `inbound.rate_per_minute`): fixed one-minute windows in process memory, so
// with several nodes the effective ceiling is the value times the nodes.
import { addressBucket, FixedWindows } from '@edgemail/shared';

const MINUTE_MS = 60_000;

/** Admits or refuses the opening of a session. */
export interface SessionRate {
  /** Counts a new session from `address`; false when its window is full (a refusal is not counted). */
  admit(address: string, now?: number): boolean;
}

/**
 * Per-address session windows: IPv4 addresses alone, IPv6 by /64 (one
 * subscriber's usual allocation), `perMinute` 0 admits everything.
 *
 * `capacity` bounds memory: past it the least recently seen address is
 * forgotten, which can only let a few more sessions through, never refuse one.
 *
 * @example
 * const rate = createSessionRate(120);
 * if (!rate.admit(session.remoteAddress)) refuse();
 */
export function createSessionRate(perMinute: number, capacity = 100_000): SessionRate {
  if (perMinute <= 0) return { admit: () => true };
  const windows = new FixedWindows(capacity);
  return {
    admit: (address, now = Date.now()) => windows.hit(addressBucket(address), perMinute, MINUTE_MS, now).allowed,
  };
}
