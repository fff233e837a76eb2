// Fixed-window request counters. One instance per limited thing (a
// credential, a client address), so a limit is exact across the whole
// deployment. Counts live in memory: an evicted instance starts its window
// afresh, which can only err towards letting a few more requests through.
import { DurableObject } from 'cloudflare:workers';
import { FixedWindow, type WindowVerdict } from '@edgemail/shared';

export type { WindowVerdict };

export class RateLimiter extends DurableObject {
  private readonly window = new FixedWindow();

  /** Counts one request against `limit` per `windowMs` and says whether it may pass. */
  hit(limit: number, windowMs: number): WindowVerdict {
    return this.window.hit(limit, windowMs);
  }

  /** Counts `count` requests at once (a batch of forwarded messages): `granted` of them may pass. */
  take(limit: number, windowMs: number, count: number): WindowVerdict {
    return this.window.take(limit, windowMs, count);
  }
}
