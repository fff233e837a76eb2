// Leases on submission keys (docs/submission.md, "Answered at the node"): the
// edge's verdict on a key (`POST /relay/v1/submission/lease`) with what the
// node answers the next messages from for `ttl_ms` (`submission.lease_ttl`,
// 2 s by default): the project's verified sending domains and the recipients
// its plan still allows. A message answered from a lease costs no round trip;
// a key revoked at the edge is no longer leased, so the node stops taking its
// messages at most `ttl_ms` after the revocation.
//
// The allowance: the edge counts the rows it committed; the node subtracts
// what it accepted and has not handed over yet (`pending`, per project), and
// takes each message's recipients from the lease. With several nodes, or API
// sends at the same time, the leases can overlap: the batch's send checks the
// limit again under the project's send lock and records a message past it
// failed (never sent past the plan).
import { createHash } from 'node:crypto';
import { LruCache, type SubmissionLeaseAnswer, type SubmissionLeaseRequest } from '@edgemail/shared';

export interface Lease {
  projectId: string;
  sandbox: boolean;
  /** Verified sending domains, lower case. */
  domains: Set<string>;
  /** Recipients this lease may still take (Infinity: the plan is unlimited). */
  available: number;
  expiresAt: number;
}

export type LeaseRefusal = Extract<SubmissionLeaseAnswer, { ok: false }>;

export interface LeaseBook {
  /** The lease of `token` from `client` while it is valid, or null. */
  current(token: string, client: string, now?: number): Lease | null;
  /** The valid lease, or a new one from the edge (one request per key at a time); throws when the edge does not answer. */
  get(token: string, client: string, options?: { fresh?: boolean; signal?: AbortSignal }): Promise<Lease | LeaseRefusal>;
  /** Takes `n` recipients of the lease's allowance; false (nothing taken) when it has fewer. */
  take(lease: Lease, n: number): boolean;
  /** `n` recipients of the project were handed over (sent or failed) or given back: no longer pending. */
  settle(projectId: string, n: number): void;
}

/** The token is kept hashed: the book is keyed by it and the client's address (a key's `allowed_ips`). */
const bookKey = (token: string, client: string) => createHash('sha256').update(token).update('\0').update(client).digest('base64');

/** @example const leases = createLeaseBook((body, signal) => edge.leaseSubmission(body, signal)); */
export function createLeaseBook(fetchLease: (body: SubmissionLeaseRequest, signal?: AbortSignal) => Promise<SubmissionLeaseAnswer>, capacity = 10_000): LeaseBook {
  const leases = new LruCache<string, Lease>(capacity);
  const asking = new Map<string, Promise<Lease | LeaseRefusal>>();
  const pending = new Map<string, number>();
  const book: LeaseBook = {
    current(token, client, now = Date.now()) {
      const lease = leases.get(bookKey(token, client));
      return lease && lease.expiresAt > now ? lease : null;
    },
    get(token, client, options = {}) {
      const key = bookKey(token, client);
      const held = options.fresh ? null : book.current(token, client);
      if (held) return Promise.resolve(held);
      const inFlight = asking.get(key);
      if (inFlight) return inFlight;
      const asked = Date.now();
      const request = fetchLease({ token, client_address: client }, options.signal).then((answer): Lease | LeaseRefusal => {
        if (!answer.ok) {
          leases.set(key, { projectId: '', sandbox: false, domains: new Set(), available: 0, expiresAt: 0 });
          return answer;
        }
        const lease: Lease = {
          projectId: answer.project_id, sandbox: answer.sandbox, domains: new Set(answer.domains),
          available: answer.remaining === null ? Infinity : Math.max(0, answer.remaining - (pending.get(answer.project_id) ?? 0)),
          // From when it was asked: the edge's verdict may be that old when it arrives.
          expiresAt: asked + answer.ttl_ms,
        };
        leases.set(key, lease);
        return lease;
      }).finally(() => asking.delete(key));
      asking.set(key, request);
      return request;
    },
    take(lease, n) {
      if (lease.available < n) return false;
      lease.available -= n;
      pending.set(lease.projectId, (pending.get(lease.projectId) ?? 0) + n);
      return true;
    },
    settle(projectId, n) {
      const left = (pending.get(projectId) ?? 0) - n;
      if (left > 0) pending.set(projectId, left);
      else pending.delete(projectId);
    },
  };
  return book;
}
