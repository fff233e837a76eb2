// The outbound loop: claim due recipients from the edge a little ahead of the
// free delivery slots, deliver each, report the results in batches. The edge's
// lease is the safety net: whatever this node never reports returns to the
// queue when its lease runs out.
import { setMaxListeners } from 'node:events';
import { Backoff, sleep, type BackoffOptions } from '../edge/backoff.js';
import { EdgeRefusedError, isFatalEdgeError } from '../edge/errors.js';
import { retrying, RetryWaits } from '../edge/retry.js';
import { MAX_CLAIM, MAX_RESULTS, RELAY_CONTRACT_VERSION, type OutboundJob, type OutboundLeaseRef, type OutboundRenewAnswer, type OutboundResult, type OutboundResultsAnswer, type UnreadableJob } from '@edgemail/shared';
import type { Log } from '../log.js';
import { LeaseKeeper } from './lease-keeper.js';
import { leaseMargin } from './lease-margin.js';

export interface OutboundWorkerOptions {
  /** `edge.claimOutbound`: the jobs, and those this node cannot read (reported deferred, never delivered). */
  claim: (max: number, signal: AbortSignal) => Promise<{ jobs: OutboundJob[]; unreadable?: UnreadableJob[] }>;
  /** `edge.reportOutbound`. */
  report: (results: OutboundResult[], signal: AbortSignal) => Promise<OutboundResultsAnswer>;
  /**
   * `edge.renewOutbound`: the leases of the jobs held, every third of the lease
   * (lease-keeper.ts). Without it a lease ends at the claim's `lease_until`.
   */
  renew?: (leases: OutboundLeaseRef[], signal: AbortSignal) => Promise<OutboundRenewAnswer>;
  /** Renew held leases this often at most, ms (tests). Default: a third of the lease. */
  renewEveryMs?: number;
  /** Delivers one job (`processJob`); should not throw (a throw is reported as deferred). */
  deliver: (job: OutboundJob, signal: AbortSignal) => Promise<OutboundResult>;
  log: Log;
  /** Told when the edge revokes the node or refuses its credential; the worker has stopped claiming by then. */
  onFatal: (err: Error) => void;
  /** Deliveries in flight at most (`outbound.concurrency`). */
  concurrency: number;
  /** With nothing claimed, ask again after this long, ms. Default 1000. */
  idlePollMs?: number;
  /**
   * While deliveries are still running, a result waits up to this long for
   * others to go in the same report (a report is a database transaction at
   * the edge), unless `concurrency` results are waiting already, ms. The
   * last result of a burst is reported at once. Default 250: at most four
   * reports a second, well inside the node's `relay_node_chatter` window.
   */
  reportGatherMs?: number;
  /** Waits after the edge failed (claims and reports): 1 s doubling to 5 min by default. */
  backoff?: BackoffOptions;
  /** How long stop() lets deliveries in flight finish before interrupting them (then reported deferred), ms. Default 30000. */
  stopTimeoutMs?: number;
  /** How long stop() keeps trying to report the last results, ms. Default 10000. */
  stopReportTimeoutMs?: number;
}

export interface OutboundWorker {
  /** Starts claiming. */
  start(): void;
  /**
   * The edge answers again (a heartbeat got through): end a wait after a
   * failed claim now rather than at the end of its backoff. A wait a 429
   * asked for is kept.
   */
  resume(): void;
  /**
   * Stops claiming, lets the deliveries in flight and the jobs claimed ahead
   * finish (up to `stopTimeoutMs`, then interrupts them: they are reported
   * deferred), reports what is left (up to `stopReportTimeoutMs`), and resolves.
   */
  stop(): Promise<void>;
  /** Deliveries in flight now. */
  readonly inFlight: number;
  /** Results waiting to be reported. */
  readonly unreported: number;
}

/**
 * @example
 * const worker = createOutboundWorker({
 *   claim: (max, s) => edge.claimOutbound(max, s), report: (r, s) => edge.reportOutbound(r, s),
 *   deliver: (job, s) => processJob(job, deps, s), log, onFatal, concurrency: config['outbound.concurrency'],
 * });
 * worker.start(); // … await worker.stop();
 */
export function createOutboundWorker(options: OutboundWorkerOptions): OutboundWorker {
  const { log } = options;
  const concurrency = Math.max(1, options.concurrency);
  const idlePollMs = options.idlePollMs ?? 1000;
  const reportGatherMs = options.reportGatherMs ?? 250;
  const claimBackoff = new Backoff(options.backoff);
  const reportBackoff = new Backoff(options.backoff);
  const claimAbort = new AbortController();
  const deliveryAbort = new AbortController();
  // Every delivery in flight (up to `concurrency`) listens on this one signal.
  setMaxListeners(0, deliveryAbort.signal);
  const reportAbort = new AbortController();
  const inFlight = new Map<number, Promise<void>>();
  /** Claimed, waiting for a free slot (claimed ahead: see run()). */
  const ready: OutboundJob[] = [];
  /** Jobs this node holds: delivering, or claimed and waiting for a slot. */
  const held = () => inFlight.size + ready.length;
  const pending: OutboundResult[] = [];
  /** Every job held until its result is reported: renewed so that none outlives its lease while this node is alive. */
  const leases = new LeaseKeeper({ renew: options.renew, log, everyMs: options.renewEveryMs });
  /** How long recent deliveries took, ms: a job whose lease ends sooner is not started (see startable). */
  const recentDurations: number[] = [];
  const expectedDurationMs = () => (recentDurations.length ? Math.max(...recentDurations) : 0);
  let nextKey = 0;
  let stopping = false;
  let fatal = false;
  let claimFailures = 0;
  /** The waits after a failed claim and a failed report, which resume() may end. */
  const claimWaits = new RetryWaits();
  const reportWaits = new RetryWaits();
  let loop: Promise<void> | null = null;
  let flushing: Promise<void> | null = null;
  let stopped: Promise<void> | null = null;
  /** Ends the loop's current wait; `slotWanted` says whether a finished delivery should. */
  let wake: (() => void) | null = null;
  let slotWanted = false;

  const idle = async (ms: number, forSlot: boolean) => {
    if (stopping) return;
    slotWanted = forSlot;
    const waitAbort = new AbortController();
    wake = () => waitAbort.abort();
    await sleep(ms, AbortSignal.any([waitAbort.signal, claimAbort.signal]));
    wake = null;
    slotWanted = false;
  };

  const goFatal = (err: Error) => {
    if (fatal) return;
    fatal = true;
    stopping = true;
    leases.stop();
    claimAbort.abort();
    wake?.();
    options.onFatal(err);
  };

  const launch = (job: OutboundJob) => {
    const key = nextKey++;
    const delivery = (async () => {
      let result: OutboundResult;
      try {
        result = await options.deliver(job, deliveryAbort.signal);
      } catch (err) {
        log.error('outbound delivery threw', { email_id: job.email_id, error: String(err) });
        result = {
          email_id: job.email_id, attempt: job.attempt, outcome: 'deferred', smtp_code: null,
          reply: `relay node error: ${err instanceof Error ? err.message : String(err)}`, server: null,
          started_at: new Date().toISOString(), duration_ms: 0,
        };
      }
      record(job, result);
    })().finally(() => {
      inFlight.delete(key);
      launchReady();
      // The last delivery of a burst: what is pending need not wait for more.
      flush();
      if (slotWanted) wake?.();
    });
    inFlight.set(key, delivery);
  };

  /** Logs a job's result and queues it for the next report. */
  const record = (job: OutboundJob, result: OutboundResult) => {
    const fields = { email_id: job.email_id, attempt: job.attempt, to: job.envelope.to, outcome: result.outcome, smtp_code: result.smtp_code, server: result.server, reply: result.reply, duration_ms: result.duration_ms };
    if (result.outcome === 'sent') log.info('outbound message delivered', fields);
    else log.warn(`outbound message ${result.outcome}`, fields);
    recentDurations.push(result.duration_ms);
    if (recentDurations.length > 20) recentDurations.shift();
    pending.push(result);
    flush();
  };

  /**
   * Whether a claimed job may start now. One the edge said is no longer this
   * node's is never started. While leases are renewed, any other may: its lease
   * follows it. When they are not (the edge did not answer the last renewal, or
   * has no renewal route), one whose lease ends before a delivery as long as the
   * recent ones (plus processJob's margin) would is given back instead: no
   * result, so its lease runs out and the next claim takes it, with no retry
   * delay; unless such a delivery would not fit in a whole lease either.
   */
  const startable = (job: OutboundJob): boolean => {
    if (leases.lost(job)) {
      leases.release(job.email_id, job.attempt);
      log.warn('outbound job not started: its lease is no longer this node\'s', { email_id: job.email_id, attempt: job.attempt });
      return false;
    }
    if (leases.renewing) return true;
    const left = Date.parse(job.lease_until) - Date.now();
    const expected = expectedDurationMs();
    const fitsALease = expected < leases.leaseLength - leaseMargin(leases.leaseLength);
    if (Number.isFinite(left) && fitsALease && left - leaseMargin(left) <= expected) {
      leases.release(job.email_id, job.attempt);
      log.warn('outbound job not started: its lease ends before a delivery would; given back to the queue', { email_id: job.email_id, attempt: job.attempt, lease_left_ms: left, expected_ms: expected });
      return false;
    }
    return true;
  };

  /**
   * A job of the claim this node cannot read (a newer edge's enum value, a
   * malformed job) is not delivered: it goes back deferred, naming why, so the
   * claim's other jobs go on and a node that reads it (an upgraded one) takes
   * it after the retry delay. Without a readable id its lease runs out instead.
   */
  const skip = (job: UnreadableJob) => {
    const why = `${job.field}: ${job.problem}`;
    if (job.email_id === null || job.attempt === null) {
      log.error('outbound job unreadable and without an id to report it by; its lease runs out and it is claimed again', { error: why });
      return;
    }
    log.warn('outbound job skipped: this node cannot read it (upgrade the node); reported deferred', { email_id: job.email_id, attempt: job.attempt, error: why });
    pending.push({
      email_id: job.email_id, attempt: job.attempt, outcome: 'deferred', smtp_code: null,
      reply: `not delivered: this relay node (relay contract ${RELAY_CONTRACT_VERSION}) cannot read the job (${why}); upgrade the node`,
      server: null, started_at: new Date().toISOString(), duration_ms: 0,
    });
    flush();
  };

  /** Starts waiting jobs while there are free slots; once stop() interrupts the deliveries, reports them deferred as it does those. */
  const launchReady = () => {
    if (deliveryAbort.signal.aborted) {
      for (const job of ready.splice(0)) {
        record(job, {
          email_id: job.email_id, attempt: job.attempt, outcome: 'deferred', smtp_code: null,
          reply: 'delivery interrupted: the relay node is stopping', server: null, started_at: new Date().toISOString(), duration_ms: 0,
        });
      }
      return;
    }
    while (ready.length && inFlight.size < concurrency) {
      const job = ready.shift()!;
      if (startable(job)) launch(job);
    }
  };

  /**
   * Reports what is pending, a batch at a time, one drain in flight at most:
   * at once when a report's worth is waiting or nothing else is being
   * delivered (or when stopping), else after `reportGatherMs`.
   */
  let gathering: NodeJS.Timeout | null = null;
  const reportNow = () => pending.length >= concurrency || held() === 0 || stopping;
  const flush = (gathered = false) => {
    if (flushing || !pending.length) return;
    if (!gathered && !reportNow()) {
      gathering ??= setTimeout(() => {
        gathering = null;
        flush(true);
      }, reportGatherMs);
      gathering.unref();
      return;
    }
    if (gathering) clearTimeout(gathering);
    gathering = null;
    flushing = drainReports().finally(() => {
      flushing = null;
      if (pending.length && !reportAbort.signal.aborted && !fatal) flush();
    });
  };

  const drainReports = async () => {
    // Results that come in while a report is on its way wait for a report's worth, as in flush().
    for (let first = true; pending.length && !fatal && (first || reportNow()); first = false) {
      let batch: OutboundResult[] = [];
      let answer: OutboundResultsAnswer;
      try {
        answer = await retrying(() => {
          // Results that completed while the last batch was on its way (or waiting) go together.
          batch = pending.splice(0, MAX_RESULTS);
          return options.report(batch, reportAbort.signal);
        }, {
          signal: reportAbort.signal,
          backoff: reportBackoff,
          waits: reportWaits,
          // A refusal will come again for the same body; anything else may pass later.
          retryable: (err) => !(err instanceof EdgeRefusedError),
          onRetry: (err, delay) => {
            pending.unshift(...batch);
            batch = [];
            log.warn('outbound results not reported; will retry', { count: pending.length, wait_ms: delay, error: String(err) });
          },
        });
      } catch (err) {
        if (isFatalEdgeError(err)) {
          goFatal(err);
          return;
        }
        if (err instanceof EdgeRefusedError) {
          // The same body will be refused again; the leases run out and the recipients are tried again.
          log.error('the edge refused outbound results; dropped', { count: batch.length, email_ids: batch.map((r) => r.email_id), error: err.message });
          for (const r of batch) leases.release(r.email_id, r.attempt);
          continue;
        }
        // Stopped past its bound (reportAbort): what was on its way is still unreported.
        pending.unshift(...batch);
        return;
      }
      reportBackoff.reset();
      for (const r of batch) leases.release(r.email_id, r.attempt);
      for (const id of answer.stale ?? []) {
        const result = batch.find((r) => r.email_id === id);
        log.warn('the edge called an outbound result stale (the lease had passed to another attempt); dropped', { email_id: id, outcome: result?.outcome, attempt: result?.attempt });
      }
    }
  };

  // Jobs held at most (delivering, or claimed and waiting for a slot): the slots, and jobs claimed ahead,
  // so that the jobs that fill the slots freeing up during a claim's round trip are already here, rather
  // than slots waiting for it. As many ahead as the slots, or more when the pace needs it: the jobs the
  // slots finish in two claim round trips (a loaded edge answers a claim in hundreds of ms, and one claim
  // at a time of `concurrency` jobs would cap the node at concurrency ÷ round trip). Their leases are
  // renewed while they wait (lease-keeper.ts).
  let claimRttMs = 0;
  const aheadNow = () => {
    const deliveryMs = recentDurations.length ? recentDurations.reduce((a, b) => a + b, 0) / recentDurations.length : 0;
    if (!claimRttMs || !deliveryMs) return concurrency;
    // At most four times the slots: one node does not take a whole queue that others could share.
    return Math.min(MAX_CLAIM, 4 * concurrency, Math.max(concurrency, Math.ceil((2 * concurrency * claimRttMs) / deliveryMs)));
  };
  const holdAtMost = () => concurrency + aheadNow();
  // A claim goes as soon as there is room for a quarter of the slots: claims follow the slots as they
  // free up, not batch by batch, and each still brings several jobs (a claim is a database round trip
  // at the edge). Its size follows the pace: the more slots freed during the last claim's round trip,
  // the more the next one asks for.
  const claimAtLeast = Math.max(1, Math.ceil(concurrency / 4));
  const run = async () => {
    while (!stopping) {
      if (holdAtMost() - held() < claimAtLeast) {
        await idle(idlePollMs, true);
        continue;
      }
      let max = 0;
      let jobs: OutboundJob[];
      let unreadable: UnreadableJob[] = [];
      try {
        // Slots only free up during a wait, so each try asks for the room there is then (never more than the claim-ahead).
        ({ jobs, unreadable = [] } = await retrying(async () => {
          max = Math.min(holdAtMost() - held(), aheadNow(), MAX_CLAIM);
          const sent = Date.now();
          const answer = await options.claim(max, claimAbort.signal);
          claimRttMs = claimRttMs ? 0.7 * claimRttMs + 0.3 * (Date.now() - sent) : Date.now() - sent;
          return answer;
        }, {
          signal: claimAbort.signal,
          backoff: claimBackoff,
          waits: claimWaits,
          // Any failure but a revoked node is waited out (an edge without the route yet answers 404).
          retryable: () => true,
          onRetry: (err, delay) => {
            claimFailures++;
            // The first failure of a streak, then every tenth: an edge without the route yet would fill the log otherwise.
            if (claimFailures === 1 || claimFailures % 10 === 0) {
              log.warn('outbound claim failed; waiting', { failures: claimFailures, wait_ms: delay, error: String(err) });
            }
          },
        }));
        claimBackoff.reset();
        if (claimFailures) log.info('the edge answers outbound claims again', { failures: claimFailures });
        claimFailures = 0;
      } catch (err) {
        if (stopping) break;
        if (isFatalEdgeError(err)) {
          goFatal(err);
          break;
        }
        throw err;
      }
      for (const job of unreadable) skip(job);
      const taken = jobs.slice(0, max);
      for (const job of taken) leases.hold(job);
      ready.push(...taken);
      launchReady();
      // Fewer than asked for: nothing else is due now.
      if (jobs.length + unreadable.length < max) await idle(idlePollMs, false);
    }
  };

  const waitForDeliveries = async (ms: number): Promise<boolean> => {
    const timer = new AbortController();
    const timedOut = sleep(ms, timer.signal).then(() => false);
    try {
      // Waiting jobs start as slots free, so nothing is held once nothing is in flight.
      while (inFlight.size) {
        const done = Promise.allSettled([...inFlight.values()]).then(() => true);
        if (!(await Promise.race([done, timedOut]))) return false;
      }
      return true;
    } finally {
      timer.abort();
    }
  };

  return {
    get inFlight() {
      return inFlight.size;
    },
    get unreported() {
      return pending.length;
    },
    start() {
      loop ??= run().catch((err: unknown) => log.error('outbound worker stopped on an unexpected error', { error: String(err) }));
    },
    resume() {
      if (stopping) return;
      // A wait a 429 asked for is kept.
      claimWaits.resume();
      reportWaits.resume();
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        claimAbort.abort();
        wake?.();
        await loop;
        const stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
        if (held()) {
          log.info('outbound: letting deliveries in flight finish', { count: held(), up_to_ms: stopTimeoutMs });
          if (!(await waitForDeliveries(stopTimeoutMs))) {
            log.warn('outbound: interrupting deliveries still in flight; they are reported deferred', { count: held() });
            deliveryAbort.abort();
            launchReady();
            await Promise.allSettled([...inFlight.values()]);
          }
        }
        // Nothing is delivered any more; what is unreported is at most reported now.
        leases.stop();
        if (fatal) return;
        const deadline = setTimeout(() => reportAbort.abort(), options.stopReportTimeoutMs ?? 10_000);
        try {
          // One more try now rather than at the end of a backoff.
          reportWaits.wake();
          while (pending.length || flushing) {
            flush();
            await flushing;
            if (reportAbort.signal.aborted || fatal) break;
          }
        } finally {
          clearTimeout(deadline);
        }
        if (gathering) clearTimeout(gathering);
        if (pending.length) {
          log.warn('outbound results not reported before stopping; their leases run out and the recipients are tried again', { count: pending.length, email_ids: pending.map((r) => r.email_id) });
        }
      })();
      return stopped;
    },
  };
}
