// The leases of the jobs a node holds (claimed and waiting for a slot, being
// delivered, or with a result not yet reported), renewed with the edge every
// third of the lease while the node holds them: a slow delivery, or a job that
// waits for a slot on a loaded node, never outlives its lease while the node
// is alive, so no other node claims it and delivers it a second time. A node
// that dies stops renewing, and its leases run out as before (the edge's
// safety net). As zone-mta's queue locks, held while their owner is alive.
import { MAX_RENEW, type OutboundJob, type OutboundLeaseRef, type OutboundRenewAnswer } from '@edgemail/shared';
import type { Log } from '../log.js';

export interface LeaseKeeperOptions {
  /** `edge.renewOutbound`; without it leases are never renewed (they end at the claim's `lease_until`). */
  renew?: (leases: OutboundLeaseRef[], signal: AbortSignal) => Promise<OutboundRenewAnswer>;
  log: Log;
  /** Renew this often at most, ms, whatever the lease (tests). Default: a third of the lease. */
  everyMs?: number;
}

const keyOf = (emailId: string, attempt: number) => `${emailId}/${attempt}`;

/**
 * Holds jobs by recipient and attempt. A renewal moves each job's
 * `lease_until` (in place: processJob's lease timer reads it again) to the
 * time the renewal was sent plus the lease's length the edge answered: a
 * node's clock then never stretches a lease past the edge's end.
 *
 * @example
 * const leases = new LeaseKeeper({ renew: (l, s) => edge.renewOutbound(l, s), log });
 * leases.hold(job); … leases.release(job.email_id, job.attempt); … leases.stop();
 */
export class LeaseKeeper {
  private readonly held = new Map<string, OutboundJob>();
  private readonly lostKeys = new Set<string>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  /** The lease's length: learned from the first claim, then as the edge answers it. */
  private leaseMs = 0;
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: LeaseKeeperOptions) {}

  /** Jobs held now. */
  get size(): number {
    return this.held.size;
  }

  /** Whether leases are being renewed: a renewal function, and the last renewal (if any yet) answered. */
  get renewing(): boolean {
    return !!this.options.renew && !this.stopped && this.failures === 0;
  }

  /** The lease's length as last learned, ms (0 before the first claim). */
  get leaseLength(): number {
    return this.leaseMs;
  }

  /** A job just claimed (`lease_until` is the edge's). */
  hold(job: OutboundJob): void {
    const key = keyOf(job.email_id, job.attempt);
    this.held.set(key, job);
    this.lostKeys.delete(key);
    if (!this.leaseMs) {
      const left = Date.parse(job.lease_until) - Date.now();
      if (Number.isFinite(left) && left > 0) this.leaseMs = left;
    }
    this.schedule();
  }

  /** The job's result was recorded (or dropped), or it was given back: nothing to renew. */
  release(emailId: string, attempt: number): void {
    const key = keyOf(emailId, attempt);
    this.held.delete(key);
    this.lostKeys.delete(key);
  }

  /** The edge said this node no longer holds the job's lease (another claim took it). */
  lost(job: Pick<OutboundJob, 'email_id' | 'attempt'>): boolean {
    return this.lostKeys.has(keyOf(job.email_id, job.attempt));
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer || this.stopped || !this.options.renew || !this.held.size || !this.leaseMs) return;
    const every = Math.max(100, Math.min(this.options.everyMs ?? Infinity, Math.floor(this.leaseMs / 3)));
    this.timer = setTimeout(() => {
      void this.renewHeld().finally(() => {
        this.timer = null;
        this.schedule();
      });
    }, every);
    this.timer.unref();
  }

  private async renewHeld(): Promise<void> {
    const jobs = [...this.held.values()];
    for (let i = 0; i < jobs.length && !this.stopped; i += MAX_RENEW) {
      const chunk = jobs.slice(i, i + MAX_RENEW);
      const sentAt = Date.now();
      let answer: OutboundRenewAnswer;
      try {
        answer = await this.options.renew!(chunk.map((j) => ({ email_id: j.email_id, attempt: j.attempt })), this.abort.signal);
      } catch (err) {
        if (this.stopped) return;
        this.failures++;
        // The first failure of a streak, then every tenth (an older edge without the route answers 404 each time).
        if (this.failures === 1 || this.failures % 10 === 0) {
          this.options.log.warn('outbound leases not renewed; jobs not started before their lease nears its end are given back', { count: chunk.length, failures: this.failures, error: String(err) });
        }
        return;
      }
      if (this.failures) this.options.log.info('outbound leases renewed again', { failures: this.failures });
      this.failures = 0;
      const byId = new Map(chunk.map((j) => [j.email_id, j]));
      for (const r of answer.renewed) {
        const job = byId.get(r.email_id);
        if (!job || !this.held.has(keyOf(job.email_id, job.attempt))) continue;
        this.leaseMs = r.lease_ms;
        job.lease_until = new Date(sentAt + r.lease_ms).toISOString();
      }
      for (const id of answer.lost) {
        const job = byId.get(id);
        if (!job || !this.held.has(keyOf(job.email_id, job.attempt))) continue;
        this.lostKeys.add(keyOf(job.email_id, job.attempt));
        // Its lease is over for this node: processJob's lease timer ends a delivery still running.
        job.lease_until = new Date(0).toISOString();
      }
    }
  }
}
