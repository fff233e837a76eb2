// The verification pool: worker threads that run SPF/DKIM/DMARC (mailauth)
// so that hashing and signature checks never hold up the listener's event
// loop (a greeting, another session's reply). Each worker takes many messages
// at once: most of a check is waiting for DNS, answered here by the
// authenticator's resolver (one cache for the node).
import { availableParallelism } from 'node:os';
import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import type { DNSResolver } from 'mailauth';
import type { FromWorker, ToWorker } from './verify-protocol.js';
import { readVerdicts } from './verify-protocol.js';
import { temporaryFailure, type AuthContext, type IngestAuthentication } from './verdicts.js';
import { entryExtension, pickWorker, startThread } from '../../threads/worker-threads.js';

export interface VerifyPoolOptions {
  /** Worker threads at most (started on first use). Default: 2, or 1 on a single core. */
  size?: number;
  /**
   * How long a worker has to confirm it dropped a job whose deadline passed.
   * A worker that cannot answer is busy on the CPU: it is terminated and
   * replaced, and its other jobs get `temperror` too. Default 1000 ms.
   */
  abortGraceMs?: number;
  /** The worker's module; tests start a stand-in. Default `verify-worker.ts` beside this file. */
  workerUrl?: URL;
}

export interface VerifyJob {
  message: Readable;
  context: AuthContext;
  /** The authserv-id of our Authentication-Results (this node's host name). */
  mta: string;
  resolver: DNSResolver;
  /**
   * The longest the checks may hold the message back: time the verifier kept
   * the data waiting (its window full) plus the time from the last byte to
   * the verdicts. Past it the verdicts are `temperror` and the job is dropped.
   */
  deadlineMs: number;
  /** Told when a worker had to be terminated. */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

export interface VerifyPool {
  /** The verdicts of one message; never rejects (a failure of the pool itself is `temperror`). */
  verify(job: VerifyJob): Promise<IngestAuthentication>;
  /** Workers started and terminated so far (a replaced worker counts in both). */
  stats(): { started: number; terminated: number };
  /** Terminates every worker; jobs in flight get `temperror`. */
  close(): Promise<void>;
}

// Bytes sent to a worker ahead of its acknowledgement, per message: enough to
// keep it busy, small enough that a slow worker holds little of each message.
const WINDOW_BYTES = 256 * 1024;
// Bytes gathered before they cross to the worker: a crossing wakes both threads.
const PIECE_BYTES = 64 * 1024;

interface RunningJob {
  job: VerifyJob;
  /** Bytes sent and not yet acknowledged. */
  inFlight: number;
  onAck(bytes: number): void;
  finish(result: IngestAuthentication | null, reason?: string): void;
}

interface PoolWorker {
  thread: Worker;
  jobs: Map<number, RunningJob>;
  /**
   * Jobs told to stop, with the timer that replaces the worker if it does not
   * confirm; null until the worker has started (loading it is not being stuck).
   */
  aborting: Map<number, NodeJS.Timeout | null>;
  ready: boolean;
  gone: boolean;
}

/**
 * @example
 * const pool = createVerifyPool();
 * const verdicts = await pool.verify({ message, context, mta: 'mx1.example.com', resolver, deadlineMs: 10_000 });
 */
export function createVerifyPool(options: VerifyPoolOptions = {}): VerifyPool {
  const size = options.size ?? Math.min(2, availableParallelism());
  const abortGraceMs = options.abortGraceMs ?? 1000;
  const workerUrl = options.workerUrl ?? new URL(`./verify-worker${entryExtension(import.meta.url)}`, import.meta.url);
  const workers: PoolWorker[] = [];
  const counts = { started: 0, terminated: 0 };
  /** Who to tell if the worker of a job being aborted has to be terminated. */
  const aborters = new Map<number, VerifyJob['log']>();
  let nextJob = 0;

  function startWorker(): PoolWorker {
    const worker: PoolWorker = { thread: startThread(workerUrl), jobs: new Map(), aborting: new Map(), ready: false, gone: false };
    counts.started++;
    worker.thread.on('message', (message: FromWorker) => onMessage(worker, message));
    worker.thread.on('error', (err) => retire(worker, `the verification worker failed: ${err.message}`));
    worker.thread.on('exit', () => retire(worker, 'the verification worker stopped'));
    workers.push(worker);
    return worker;
  }

  /** An idle worker never keeps the process alive. */
  function holdOpen(worker: PoolWorker): void {
    if (worker.jobs.size || worker.aborting.size) worker.thread.ref();
    else worker.thread.unref();
  }

  function onMessage(worker: PoolWorker, message: FromWorker): void {
    switch (message.type) {
      case 'ack':
        return worker.jobs.get(message.job)?.onAck(message.bytes);
      case 'done':
        return worker.jobs.get(message.job)?.finish(readVerdicts(message.result), 'the verification worker answered malformed verdicts');
      case 'failed':
        return worker.jobs.get(message.job)?.finish(null, message.error);
      case 'ready':
        worker.ready = true;
        for (const job of worker.aborting.keys()) armAbort(worker, job);
        return;
      case 'aborted': {
        clearTimeout(worker.aborting.get(message.job) ?? undefined);
        worker.aborting.delete(message.job);
        return holdOpen(worker);
      }
      case 'dns':
        return answerDns(worker, message);
    }
  }

  function answerDns(worker: PoolWorker, question: Extract<FromWorker, { type: 'dns' }>): void {
    const send = (answer: Extract<ToWorker, { type: 'dns-answer' }>) => {
      if (!worker.gone) worker.thread.postMessage(answer);
    };
    const running = worker.jobs.get(question.job);
    if (!running) return send({ type: 'dns-answer', query: question.query, error: { message: 'the job has ended', code: 'ECANCELLED' } });
    // A resolver that throws instead of rejecting must not take the node down.
    Promise.resolve().then(() => running.job.resolver(question.name, question.rrtype)).then(
      (answer) => send({ type: 'dns-answer', query: question.query, answer }),
      (err: Error & { code?: string }) => send({ type: 'dns-answer', query: question.query, error: { message: err.message, code: err.code } }),
    );
  }

  /** Tells the worker to drop a job; a worker too busy to confirm within the grace is replaced. */
  function abort(worker: PoolWorker, job: number, log: VerifyJob['log']): void {
    if (worker.gone) return;
    worker.thread.postMessage({ type: 'abort', job } satisfies ToWorker);
    worker.aborting.set(job, null);
    aborters.set(job, log);
    if (worker.ready) armAbort(worker, job);
    holdOpen(worker);
  }

  function armAbort(worker: PoolWorker, job: number): void {
    const log = aborters.get(job);
    aborters.delete(job);
    worker.aborting.set(job, setTimeout(() => {
      retire(worker, `the verification worker was terminated: it did not let go of a message within ${abortGraceMs} ms`, log);
    }, abortGraceMs));
  }

  /**
   * Takes a worker out of the pool for good (the next job starts a new one);
   * whatever it was checking is `temperror`. Logged to `log`, else to the log
   * of one of its jobs.
   */
  function retire(worker: PoolWorker, reason: string, log?: VerifyJob['log']): void {
    if (worker.gone) return;
    worker.gone = true;
    const teller = log ?? [...worker.jobs.values()].find((r) => r.job.log)?.job.log;
    teller?.warn('verification worker terminated', { reason, messages_in_flight: worker.jobs.size });
    workers.splice(workers.indexOf(worker), 1);
    for (const [job, timer] of worker.aborting) {
      clearTimeout(timer ?? undefined);
      aborters.delete(job);
    }
    for (const running of [...worker.jobs.values()]) running.finish(null, reason);
    counts.terminated++;
    void worker.thread.terminate();
  }

  /** One number per resolver, for the workers' reuse of answers (verify-worker.ts). */
  const resolverIds = new WeakMap<DNSResolver, number>();
  let nextResolver = 0;
  const resolverId = (resolver: DNSResolver) => {
    let id = resolverIds.get(resolver);
    if (id === undefined) resolverIds.set(resolver, (id = ++nextResolver));
    return id;
  };

  function verify(job: VerifyJob): Promise<IngestAuthentication> {
    return new Promise((resolve) => {
      const { message, context, mta } = job;
      const worker = pickWorker(workers, size, startWorker);
      const id = ++nextJob;
      const post = (m: ToWorker, transfer?: ArrayBuffer[]) => {
        if (!worker.gone) worker.thread.postMessage(m, transfer);
      };
      let settled = false;
      const budget = deadline(job.deadlineMs, () => {
        running.finish(null, `checks took longer than ${job.deadlineMs} ms`);
        abort(worker, id, job.log);
      });

      let gathered: Buffer[] = [];
      let gatheredBytes = 0;
      let started = false;
      /** Sends what was gathered, copied into one buffer of its own so it can be transferred. */
      const send = (end: boolean) => {
        const data = gatheredBytes ? new Uint8Array(gatheredBytes) : undefined;
        let at = 0;
        for (const chunk of gathered) {
          data!.set(chunk, at);
          at += chunk.length;
        }
        post({ type: 'data', job: id, start: started ? undefined : { context, mta, resolver: resolverId(job.resolver) }, data, end }, data ? [data.buffer as ArrayBuffer] : []);
        started = true;
        running.inFlight += gatheredBytes;
        gathered = [];
        gatheredBytes = 0;
      };
      const onData = (data: Buffer | string) => {
        const chunk = typeof data === 'string' ? Buffer.from(data) : data;
        gathered.push(chunk);
        gatheredBytes += chunk.length;
        if (gatheredBytes < PIECE_BYTES) return;
        send(false);
        if (running.inFlight >= WINDOW_BYTES) {
          message.pause();
          budget.run();
        }
      };
      const onEnd = () => {
        send(true);
        budget.run();
      };
      const onError = (err: Error) => {
        running.finish(null, err.message);
        abort(worker, id, job.log);
      };
      const onClose = () => {
        if (message.readableEnded) return;
        running.finish(null, 'the message stream closed before its end');
        abort(worker, id, job.log);
      };

      const running: RunningJob = {
        job,
        inFlight: 0,
        onAck(bytes) {
          running.inFlight -= bytes;
          if (running.inFlight < WINDOW_BYTES && message.isPaused() && !message.readableEnded) {
            budget.pause();
            message.resume();
          }
        },
        finish(result, reason) {
          if (settled) return;
          settled = true;
          budget.stop();
          worker.jobs.delete(id);
          holdOpen(worker);
          message.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
          // Stop feeding a verifier that gave up, so the message's other reader is not held back.
          if (!result && !message.readableEnded) message.destroy();
          resolve(result ?? temporaryFailure(context.ip, mta, reason ?? 'verification failed'));
        },
      };

      worker.jobs.set(id, running);
      holdOpen(worker);
      // A stream that is already over would never say so again.
      if (message.destroyed || message.readableEnded) return running.finish(null, 'the message stream had already ended');
      message.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    });
  }

  return {
    verify,
    stats: () => ({ ...counts }),
    async close() {
      for (const worker of [...workers]) retire(worker, 'the verification pool was closed');
    },
  };
}

/**
 * A budget of `ms` that is spent only while `run()` (the verifier holds the
 * message back) and not after `pause()`; `onExpire` once it is used up.
 */
function deadline(ms: number, onExpire: () => void) {
  let spent = 0;
  let since: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  return {
    run() {
      if (since !== null) return;
      since = performance.now();
      timer = setTimeout(onExpire, Math.max(0, ms - spent));
    },
    pause() {
      if (since === null) return;
      spent += performance.now() - since;
      since = null;
      clearTimeout(timer);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}


let shared: VerifyPool | undefined;

/** The node's one pool, shared by every authenticator in the process. */
export function sharedVerifyPool(): VerifyPool {
  shared ??= createVerifyPool();
  return shared;
}
