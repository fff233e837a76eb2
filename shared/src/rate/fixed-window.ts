// Fixed-window request counting, the one rule behind every limiter: the
// edge's RateLimiter Durable Object, the edge's per-isolate fallback when that
// object cannot be reached, and a relay node's per-address SMTP session limits.
import { LruCache } from '../cache/lru.js';

export interface WindowVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
  /** Of several hits counted at once (`take`), how many passed; the rest were refused uncounted. */
  granted?: number;
}

/** One counter: `limit` hits per window aligned to multiples of `windowMs`. */
export class FixedWindow {
  private windowStart = 0;
  private count = 0;

  /** Counts one hit and says whether it may pass; a refused hit is not counted. */
  hit(limit: number, windowMs: number, now = Date.now()): WindowVerdict {
    const start = now - (now % windowMs);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.count = 0;
    }
    const allowed = this.count < limit;
    if (allowed) this.count++;
    return { allowed, limit, remaining: Math.max(0, limit - this.count), resetAt: start + windowMs };
  }

  /**
   * Counts `count` hits at once (a relay node's batch of messages, each one a
   * hit): as many as the window still holds pass (`granted`), the rest are
   * refused uncounted, as they would be one by one. Allowed when any passes.
   */
  take(limit: number, windowMs: number, count: number, now = Date.now()): WindowVerdict & { granted: number } {
    const start = now - (now % windowMs);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.count = 0;
    }
    const granted = Math.max(0, Math.min(count, limit - this.count));
    this.count += granted;
    return { allowed: granted > 0, limit, remaining: Math.max(0, limit - this.count), resetAt: start + windowMs, granted };
  }
}

/**
 * Many counters by bucket name, bounded: beyond `capacity` buckets the least
 * recently hit one is forgotten (it can only err towards letting a few more
 * requests through).
 */
export class FixedWindows {
  private readonly windows: LruCache<string, FixedWindow>;

  constructor(capacity = 10_000) {
    this.windows = new LruCache(capacity);
  }

  hit(bucket: string, limit: number, windowMs: number, now = Date.now()): WindowVerdict {
    const window = this.windows.get(bucket) ?? this.windows.set(bucket, new FixedWindow());
    return window.hit(limit, windowMs, now);
  }

  take(bucket: string, limit: number, windowMs: number, count: number, now = Date.now()): WindowVerdict & { granted: number } {
    const window = this.windows.get(bucket) ?? this.windows.set(bucket, new FixedWindow());
    return window.take(limit, windowMs, count, now);
  }
}
