// Audit events waiting in the isolate to be written in batches after the
// response. Bounded: when full, an event is dropped and the drop logged as an
// error with the running total, so recording never delays or fails a request.
import type { auditEvents } from '@edgemail/schema';
import { loggableError } from '../../db/errors.js';

export type AuditEventRow = typeof auditEvents.$inferInsert;

const BATCH_SIZE = 100;

export class AuditQueue {
  private pending: AuditEventRow[] = [];
  /** Events lost since the isolate started: dropped on overflow or by a failed write. */
  dropped = 0;
  /** The flush in progress, if any; the next one starts when it ends. */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.pending.length;
  }

  enqueue(event: AuditEventRow): boolean {
    if (this.pending.length >= this.capacity) {
      this.dropped++;
      console.error(`audit queue full (${this.capacity}): dropped ${event.type} event; ${this.dropped} dropped in total`);
      return false;
    }
    this.pending.push(event);
    return true;
  }

  /**
   * Writes everything queued, a batch per call of `write`. Flushes run one
   * after another, so batches reach the database in the order their events
   * were queued: once an event is stored, every event queued before it is
   * stored too or was logged as lost. No event is written twice.
   */
  flush(write: (batch: AuditEventRow[]) => Promise<unknown>): Promise<void> {
    this.writing = this.writing.then(() => this.drain(write));
    return this.writing;
  }

  private async drain(write: (batch: AuditEventRow[]) => Promise<unknown>): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.splice(0, BATCH_SIZE);
      try {
        await write(batch);
      } catch (e) {
        this.dropped += batch.length;
        console.error(`audit write failed: lost ${batch.length} events; ${this.dropped} dropped in total`, loggableError(e));
      }
    }
  }
}

let isolateQueue: AuditQueue | undefined;

/** The isolate's queue; its capacity is fixed by the first request's settings. */
export function auditQueue(capacity: number): AuditQueue {
  isolateQueue ??= new AuditQueue(capacity);
  return isolateQueue;
}
