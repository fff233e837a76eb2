// One composition per message, not per recipient: a send to several
// recipients is one job per recipient, each with the same message and key,
// claimed together or close together, and composing and signing is most of
// the CPU a delivery costs the node. The signed bytes are kept briefly under
// a digest of everything they are made of (the job's message and DKIM key),
// so a job can only ever get bytes composed from exactly its own content.
import { createHash } from 'node:crypto';
import type { OutboundJob } from '@edgemail/shared';

export interface ComposedMessagesOptions {
  /** How long bytes are kept after they were composed, ms. Default 30000. */
  ttlMs?: number;
  /** Bytes kept at most (the oldest let go first); a larger message is not kept. Default 32 MiB. */
  maxBytes?: number;
}

interface Entry { bytes: Promise<Buffer>; expires: number; size: number }

export class ComposedMessages {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxBytes: number;
  private kept = 0;

  constructor(options: ComposedMessagesOptions = {}) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  }

  /**
   * The bytes `compose` makes for `job`, or those it made for an earlier job
   * with the same message and key (the same DKIM signature, its t= included).
   * A failure is not kept: the next job composes again.
   *
   * @example const bytes = await composed.of(job, () => composeSignedMessage(job, { signTime: started }));
   */
  of(job: Pick<OutboundJob, 'message' | 'dkim'>, compose: () => Promise<Buffer>): Promise<Buffer> {
    const now = Date.now();
    this.dropExpired(now);
    const key = createHash('sha256').update(JSON.stringify([job.message, job.dkim])).digest('base64');
    const found = this.entries.get(key);
    if (found) return found.bytes;
    const entry: Entry = { bytes: compose(), expires: now + this.ttlMs, size: 0 };
    this.entries.set(key, entry);
    entry.bytes.then((bytes) => {
      if (this.entries.get(key) !== entry) return;
      if (bytes.length > this.maxBytes) {
        this.entries.delete(key);
        return;
      }
      entry.size = bytes.length;
      this.kept += bytes.length;
      // Oldest first (a Map keeps insertion order) until the rest fits.
      for (const [k, e] of this.entries) {
        if (this.kept <= this.maxBytes) break;
        this.remove(k, e);
      }
    }, () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return entry.bytes;
  }

  /** Messages kept now (composed or being composed). */
  get size(): number {
    return this.entries.size;
  }

  private dropExpired(now: number) {
    for (const [k, e] of this.entries) {
      // Insertion order is expiry order: the first one still fresh ends the sweep.
      if (e.expires > now) break;
      this.remove(k, e);
    }
  }

  private remove(key: string, entry: Entry) {
    this.entries.delete(key);
    this.kept -= entry.size;
  }
}
