// The messages between the verification pool (main thread) and its workers.
// One worker verifies many messages at once (most of the time is spent
// waiting for DNS, which the main thread answers), each under its job id.
import type { AuthContext, IngestAuthentication } from './verdicts.js';
import { isDmarcPolicy, toVerdict } from './verdicts.js';

/** Main thread to worker. */
export type ToWorker =
  /**
   * A job's message, in order, in pieces of at least 64 KiB (each crossing
   * costs both threads a wake-up): the first carries `start`, the last `end`;
   * a small message is one piece. The buffer is transferred, not copied.
   * `resolver` names the job's resolver (one number per resolver of the
   * pool), so the worker reuses an answer only for jobs that ask the same one.
   */
  | { type: 'data'; job: number; start?: { context: AuthContext; mta: string; resolver?: number }; data?: Uint8Array; end?: boolean }
  /** Stop working on a job (its deadline passed or its stream failed); answered with `aborted`. */
  | { type: 'abort'; job: number }
  | { type: 'dns-answer'; query: number; answer?: unknown; error?: { message: string; code?: string } };

/** Worker to main thread. */
export type FromWorker =
  /** The worker has loaded and listens (the grace for an abort starts only then). */
  | { type: 'ready' }
  /** `bytes` of a job's data were taken by the verifier: the main thread may send that much more (not sent after `end`). */
  | { type: 'ack'; job: number; bytes: number }
  /** A DNS question for the main thread's resolver (one cache for the whole node). */
  | { type: 'dns'; job: number; query: number; name: string; rrtype: string }
  | { type: 'done'; job: number; result: unknown }
  | { type: 'failed'; job: number; error: string }
  | { type: 'aborted'; job: number };

/**
 * A worker's answer checked on arrival (a value crossing a thread boundary is
 * never cast): null unless it is a complete set of verdicts.
 */
export function readVerdicts(value: unknown): IngestAuthentication | null {
  const v = value as Partial<IngestAuthentication> | null;
  const auth = v?.auth;
  if (!v || !auth || typeof auth !== 'object') return null;
  const words = [auth.spf, auth.dkim, auth.dmarc];
  if (!words.every((w) => typeof w === 'string' && toVerdict(w) === w)) return null;
  if (typeof auth.aligned !== 'boolean' || typeof auth.client_ip !== 'string') return null;
  if (v.dmarcPolicy !== null && !isDmarcPolicy(v.dmarcPolicy)) return null;
  if (typeof v.dmarcReject !== 'boolean' || typeof v.headers !== 'string') return null;
  return {
    auth: { spf: auth.spf!, dkim: auth.dkim!, dmarc: auth.dmarc!, aligned: auth.aligned, client_ip: auth.client_ip },
    dmarcPolicy: v.dmarcPolicy ?? null,
    dmarcReject: v.dmarcReject,
    headers: v.headers,
  };
}
