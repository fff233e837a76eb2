// One claimed job from start to Result: compose and sign, choose the route,
// deliver (or capture), and say how it went in the protocol's terms.
import type { DNSResolver } from 'mailauth';
import type { OutboundJob, OutboundResult } from '@edgemail/shared';
import type { Log } from '../log.js';
import { captureMessage } from './capture.js';
import { AddressRefusedError, composeSignedMessage } from './compose.js';
import type { ComposedMessages } from './composed-messages.js';
import { deliverMessage, type DeliveryOutcome, type DeliveryTimeouts } from './deliver.js';
import { planDelivery, type RouteSettings } from './route.js';
import { sharedPoolOutcome } from './shared-pool-outcome.js';
import type { TransportPool } from './transport-pool.js';
import { leaseMargin } from './lease-margin.js';

export interface ProcessJobDeps {
  settings: RouteSettings;
  /** The node's resolver (`dns.servers`), for MX and address lookups. */
  resolve: DNSResolver;
  /** The EHLO name. */
  hostName: string;
  log: Log;
  timeouts?: Partial<DeliveryTimeouts>;
  /** Extra trusted certificates for configured SMTP servers (tests). */
  extraCa?: string[];
  /** Sessions reused per destination; one session per message without it. */
  transports?: TransportPool;
  /** One composition shared by the jobs of one message; composed per job without it. */
  composed?: ComposedMessages;
  /**
   * Composes and signs a job's message: the compose pool's worker threads
   * (compose-pool.ts) on a node; `composeSignedMessage` on this thread without it.
   */
  compose?: (job: Pick<OutboundJob, 'message' | 'dkim'>, signTime: Date) => Promise<Buffer>;
  /** The clock, for tests. */
  now?: () => Date;
}


/**
 * Delivers one job and answers its Result. Never throws: a failure of the
 * node itself (a key mailauth refuses, a capture directory it cannot write)
 * is a `deferred` result naming it, so the recipient is tried again later; an
 * address entry that is not exactly one mailbox is `failed` (permanent).
 *
 * @example const result = await processJob(job, { settings, resolve, hostName, log }, signal);
 */
export async function processJob(job: OutboundJob, deps: ProcessJobDeps, signal?: AbortSignal): Promise<OutboundResult> {
  const now = deps.now ?? (() => new Date());
  const started = now();
  const finish = (o: Omit<DeliveryOutcome, 'tried'>): OutboundResult => ({
    email_id: job.email_id,
    attempt: job.attempt,
    outcome: o.outcome,
    smtp_code: o.smtp_code,
    reply: o.reply,
    server: o.server,
    started_at: started.toISOString(),
    duration_ms: Math.max(0, now().getTime() - started.getTime()),
  });
  let bytes: Buffer;
  try {
    const compose = () => (deps.compose ? deps.compose(job, started) : composeSignedMessage(job, { signTime: started }));
    // A stopping node does not wait on a compose worker: the pool's own bound on a stuck one is minutes.
    bytes = await unlessAborted(deps.composed ? deps.composed.of(job, compose) : compose(), signal);
  } catch (err) {
    // An address entry that is not one mailbox is in the job itself: no later attempt composes it either.
    if (err instanceof AddressRefusedError) {
      deps.log.info('outbound message refused: an address is not exactly one mailbox', { email_id: job.email_id, field: err.field });
      return finish({ outcome: 'failed', smtp_code: null, reply: err.message, server: null });
    }
    deps.log.error('outbound message could not be composed or signed', { email_id: job.email_id, error: String(err) });
    return finish({ outcome: 'deferred', smtp_code: null, reply: `relay node could not compose the message: ${messageOf(err)}`, server: null });
  }
  // The margin shrinks with a short lease (tests use seconds), so an attempt always gets most of it.
  const margin = leaseMargin(Date.parse(job.lease_until) - Date.now());
  // `lease_until` moves while the job runs: the worker renews the leases it holds (lease-keeper.ts) in place.
  const deadlineNow = () => Date.parse(job.lease_until) - margin;
  const deadline = Number.isFinite(deadlineNow()) ? deadlineNow : undefined;
  // Planning and the whole attempt end before the lease does: the per-step SMTP timeouts add up to
  // minutes, and a delivery still running when another node takes the lease would send twice.
  const lease = deadline ? leaseTimer(deadline, signal) : undefined;
  const jobSignal = lease?.signal ?? signal;
  try {
    const plan = await planDelivery(job, deps.settings, deps.resolve, { signal: jobSignal });
    if (plan.kind === 'refused') return finish({ outcome: plan.outcome, smtp_code: null, reply: plan.reply, server: null });
    if (plan.kind === 'capture') {
      const path = await captureMessage(plan.dir, job.email_id, bytes);
      // Debug: the worker's delivered line names the file (`server: capture:<path>`).
      deps.log.debug?.('outbound message captured', { email_id: job.email_id, to: job.envelope.to, file: path });
      return finish({ outcome: 'sent', smtp_code: 250, reply: `250 captured to ${path}`, server: `capture:${path}` });
    }
    if (plan.dropped) {
      deps.log.warn('outbound: MX addresses that are not public left out (outbound.allow_private_mx is off)', { email_id: job.email_id, to: job.envelope.to, dropped: plan.dropped });
    }
    // No delivery starts once the lease is (nearly) over: another node may hold it by then.
    if (deadline && Date.now() >= deadline()) {
      return finish({ outcome: 'deferred', smtp_code: null, reply: 'delivery not started: the lease ended first; tried again later', server: null });
    }
    // MAIL FROM is the VERP return path when the edge gave one (docs/bounces.md); the From header is unchanged.
    const envelope = { from: job.envelope.return_path ?? job.envelope.from, to: job.envelope.to };
    const outcome = await deliverMessage(plan, envelope, bytes, {
      name: deps.hostName,
      timeouts: deps.timeouts,
      extraCa: deps.extraCa,
      transports: deps.transports,
      signal: jobSignal,
      deadline,
    });
    if (outcome.tried.length > 1) deps.log.debug?.('outbound delivery tried several hosts', { email_id: job.email_id, via: plan.via, tried: outcome.tried });
    let ended: Omit<DeliveryOutcome, 'tried'> = outcome;
    // A message the server took is sent, however late: calling it deferred would deliver it again.
    if (lease?.expired() && !signal?.aborted && outcome.outcome !== 'sent') {
      ended = { ...outcome, outcome: 'deferred', smtp_code: null, reply: `delivery cut off ${margin} ms before the lease's end (${outcome.reply}); tried again later` };
    }
    if (plan.via === 'pool') {
      // The pool is the operator's: its host and its replies stay in this log, the tenant sees a neutral account.
      // A sent one is the worker's delivered line; the pool's own reply to a failure stays at info.
      const pool = { email_id: job.email_id, outcome: ended.outcome, server: ended.server, reply: ended.reply, tried: outcome.tried };
      if (ended.outcome === 'sent') deps.log.debug?.('outbound delivery through the shared pool', pool);
      else deps.log.info('outbound delivery through the shared pool', pool);
      return finish(sharedPoolOutcome(ended));
    }
    return finish(ended);
  } catch (err) {
    deps.log.error('outbound delivery failed inside the relay node', { email_id: job.email_id, error: String(err) });
    const failed = { outcome: 'deferred' as const, smtp_code: null, reply: `relay node error: ${messageOf(err)}`, server: null };
    return finish(job.route.kind === 'smtp' && job.route.source === 'pool' ? sharedPoolOutcome(failed) : failed);
  } finally {
    lease?.clear();
  }
}

/**
 * A signal that aborts once `deadline()` has passed, or when `outer` does (the
 * node stopping); `deadline` may move later while it waits (a renewed lease),
 * so the timer looks again when it fires. One controller and one timer per job
 * (AbortSignal.any and AbortSignal.timeout cost more on the main thread).
 */
function leaseTimer(deadline: () => number, outer?: AbortSignal): { signal: AbortSignal; expired(): boolean; clear(): void } {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const check = () => {
    const wait = deadline() - Date.now();
    if (wait > 0) {
      timer = setTimeout(check, wait);
      timer.unref();
      return;
    }
    expired = true;
    abort.abort(new Error('the lease nears its end'));
  };
  const onOuter = () => abort.abort(outer!.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  if (!abort.signal.aborted) check();
  return {
    signal: abort.signal,
    expired: () => expired,
    clear: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

/** `work`, or a rejection naming the interruption as soon as `signal` aborts. */
function unlessAborted<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  const interrupted = () => new Error('interrupted while composing: the node is stopping');
  if (signal.aborted) return Promise.reject(interrupted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(interrupted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
