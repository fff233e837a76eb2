// Fixed-window request counters. One instance per limited thing (an API key,
// a client address), so a limit is exact across the whole deployment. Counts
// live in memory: an evicted instance starts its window afresh, which can only
// err towards letting a few more requests through.
import { DurableObject } from 'cloudflare:workers';

export interface WindowVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
}

export class RateLimiter extends DurableObject {
  private windowStart = 0;
  private count = 0;

  /** Counts one request against `limit` per `windowMs` and says whether it may pass. */
  hit(limit: number, windowMs: number): WindowVerdict {
    const now = Date.now();
    const start = now - (now % windowMs);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.count = 0;
    }
    const allowed = this.count < limit;
    if (allowed) this.count++;
    return { allowed, limit, remaining: Math.max(0, limit - this.count), resetAt: start + windowMs };
  }
}
