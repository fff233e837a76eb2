// The compose pool: worker threads that compose and DKIM-sign claimed jobs
// (compose-worker.ts), so that the main thread, which holds every SMTP session
// and the edge's claims and reports, never waits behind MIME encoding or an
// RSA signature. Composing and signing is most of what a delivery costs the
// node; on one thread it capped a node at about one core.
//
// A worker that dies (a crash, an out-of-memory abort) or stops answering is
// replaced; the jobs it held are composed again by another, so none is lost.
// A job that takes workers down `maxAttempts` times is given up (the delivery
// is deferred, naming it) rather than taking down worker after worker.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { OutboundJob } from '@edgemail/shared';
import { AddressRefusedError } from './compose.js';
import type { FromComposeWorker, ToComposeWorker } from './compose-protocol.js';
import { entryExtension, pickWorker, startThread } from '../threads/worker-threads.js';

export interface ComposePoolOptions {
  /** Worker threads at most (started as jobs come). Default `composeThreadsFor(0)`: the cores less one, at least 1. */
  size?: number;
  /** Times a job is handed to a worker before it is given up, when the workers holding it die. Default 3. */
  maxAttempts?: number;
  /**
   * A worker that has not answered a job this long after it was handed over
   * is taken as stuck: terminated and replaced, its jobs handed to another
   * (the late one's attempt counted). Default 120000 ms.
   */
  jobTimeoutMs?: number;
  /** The worker's module; tests start a stand-in. Default `compose-worker.ts` (`.js` when bundled) beside this file. */
  workerUrl?: URL;
  /** Told when a worker died or was terminated. */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

/** What one job is composed from. */
export type ComposeInput = Pick<OutboundJob, 'message' | 'dkim'>;

export interface ComposePool {
  /**
   * The job's message composed and signed in a worker (`composeSignedMessage`);
   * rejects with `AddressRefusedError` as it does, or an Error naming why.
   */
  compose(job: ComposeInput, signTime: Date): Promise<Buffer>;
  /**
   * Starts the workers now rather than with the first jobs, and resolves once
   * they have loaded (the composer, the signer: seconds on a busy machine),
   * or after `timeoutMs`: jobs claimed before then would spend their lease
   * waiting. Never rejects.
   */
  warm(timeoutMs?: number): Promise<void>;
  /** Workers started and lost so far (a replaced worker counts in both), jobs retried after a loss. */
  stats(): { started: number; lost: number; retried: number };
  /** Linux thread ids of the live workers (for the bench's CPU split); empty where unknown. */
  threadIds(): number[];
  /** Terminates every worker; jobs not yet composed reject. */
  close(): Promise<void>;
}

/**
 * Worker threads for `setting` (`outbound.compose_threads`): the number
 * itself, or with 0 the cores less one (the main thread keeps one), at least 1.
 */
export function composeThreadsFor(setting: number, cores = availableParallelism()): number {
  return setting > 0 ? setting : Math.max(1, cores - 1);
}

/** The pools of this process not yet closed (a node has one; tests may have several). */
const livePools = new Set<ComposePool>();

/**
 * Linux thread ids of every compose worker in this process: `pnpm bench
 * outbound` reads their CPU time apart from the main thread's.
 */
export function composeThreadIds(): number[] {
  return [...livePools].flatMap((pool) => pool.threadIds());
}

interface PendingJob {
  id: number;
  message: ToComposeWorker;
  attempts: number;
  resolve(bytes: Buffer): void;
  reject(err: Error): void;
}

interface PoolWorker {
  thread: Worker;
  jobs: Map<number, { job: PendingJob; timer: NodeJS.Timeout }>;
  gone: boolean;
  /** Resolves once it said it is ready, or is gone. */
  ready: Promise<void>;
  onReady: () => void;
  /** Its Linux thread id, once it said it is ready. */
  tid: number | null;
}

/**
 * @example
 * const pool = createComposePool({ size: composeThreadsFor(config['outbound.compose_threads']) });
 * const bytes = await pool.compose(job, new Date());
 */
export function createComposePool(options: ComposePoolOptions = {}): ComposePool {
  const size = Math.max(1, options.size ?? composeThreadsFor(0));
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const jobTimeoutMs = options.jobTimeoutMs ?? 120_000;
  const workerUrl = options.workerUrl ?? new URL(`./compose-worker${entryExtension(import.meta.url)}`, import.meta.url);
  const workers: PoolWorker[] = [];
  const counts = { started: 0, lost: 0, retried: 0 };
  let nextId = 0;
  let closed = false;

  function startWorker(): PoolWorker {
    let onReady!: () => void;
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    const worker: PoolWorker = { thread: startThread(workerUrl), jobs: new Map(), gone: false, tid: null, ready, onReady };
    counts.started++;
    worker.thread.on('message', (message: FromComposeWorker) => onMessage(worker, message));
    worker.thread.on('error', (err) => lose(worker, `the compose worker failed: ${err.message}`));
    worker.thread.on('exit', (code) => lose(worker, `the compose worker stopped (exit code ${code})`));
    workers.push(worker);
    return worker;
  }

  /** A worker with nothing to do never keeps the process alive. */
  function holdOpen(worker: PoolWorker): void {
    if (worker.jobs.size) worker.thread.ref();
    else worker.thread.unref();
  }

  function onMessage(worker: PoolWorker, message: FromComposeWorker): void {
    if (message.type === 'ready') {
      worker.tid = message.tid;
      worker.onReady();
      return;
    }
    const held = worker.jobs.get(message.id);
    if (!held) return;
    worker.jobs.delete(message.id);
    clearTimeout(held.timer);
    holdOpen(worker);
    if (message.type === 'composed') {
      const { bytes } = message;
      held.job.resolve(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return;
    }
    const { failure } = message;
    held.job.reject(failure.kind === 'address' ? new AddressRefusedError(failure.field, failure.value) : new Error(failure.message));
  }

  function dispatch(job: PendingJob): void {
    const worker = pickWorker(workers, size, startWorker);
    job.attempts++;
    // Measured from the hand-over, queueing in the worker included: only a worker that holds jobs far past it is stuck.
    const timer = setTimeout(() => {
      lose(worker, `the compose worker was terminated: a message was not composed within ${jobTimeoutMs} ms`);
    }, jobTimeoutMs);
    timer.unref();
    worker.jobs.set(job.id, { job, timer });
    holdOpen(worker);
    worker.thread.postMessage(job.message);
  }

  /**
   * Takes a worker out of the pool for good (the next job starts a new one)
   * and hands what it held to the others; a job already tried `maxAttempts`
   * times is given up.
   */
  function lose(worker: PoolWorker, reason: string): void {
    if (worker.gone) return;
    worker.gone = true;
    worker.onReady();
    workers.splice(workers.indexOf(worker), 1);
    counts.lost++;
    void worker.thread.terminate();
    const held = [...worker.jobs.values()];
    worker.jobs.clear();
    if (!closed) options.log?.warn('compose worker lost; its messages are composed again by another', { reason, messages_in_flight: held.length });
    for (const { job, timer } of held) {
      clearTimeout(timer);
      if (closed) job.reject(new Error('the compose pool was closed'));
      else if (job.attempts >= maxAttempts) job.reject(new Error(`${reason}; given up after ${job.attempts} attempts to compose this message`));
      else {
        counts.retried++;
        dispatch(job);
      }
    }
  }

  const pool: ComposePool = {
    compose(job, signTime) {
      if (closed) return Promise.reject(new Error('the compose pool was closed'));
      return new Promise<Buffer>((resolve, reject) => {
        const id = ++nextId;
        dispatch({ id, message: { type: 'compose', id, job: { message: job.message, dkim: job.dkim }, signTime: signTime.getTime() }, attempts: 0, resolve, reject });
      });
    },
    async warm(timeoutMs = 30_000) {
      while (!closed && workers.length < size) holdOpen(startWorker());
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        timer.unref();
      });
      await Promise.race([Promise.all(workers.map((w) => w.ready)), bound]);
      clearTimeout(timer);
    },
    stats: () => ({ ...counts }),
    threadIds: () => workers.map((w) => w.tid).filter((t): t is number => t !== null),
    async close() {
      closed = true;
      livePools.delete(pool);
      for (const worker of [...workers]) lose(worker, 'the compose pool was closed');
    },
  };
  livePools.add(pool);
  return pool;
}
