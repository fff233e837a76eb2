// A verification worker thread (started by verify-pool.ts): runs mailauth for
// many messages at once, off the listener's event loop. Message bytes come in
// chunks and are acknowledged as the verifier takes them, so the main thread
// never sends more than a small window ahead; DNS questions go back to the
// main thread's resolver.
// First: it must wrap mailauth's key conversion before mailauth's DKIM verifier loads.
import './public-key-cache.js';
import type { DNSResolver } from 'mailauth';
import { Readable } from 'node:stream';
import { parentPort } from 'node:worker_threads';
import { limitDkimVerification } from './dkim-limits.js';
import type { FromWorker, ToWorker } from './verify-protocol.js';
import { verifyMessage } from './verify-message.js';

if (!parentPort) throw new Error('verify-worker.ts runs as a worker thread (see verify-pool.ts)');
const port = parentPort;
const post = (message: FromWorker) => port.postMessage(message);

limitDkimVerification();
// mailauth 4.13 prints a debug line for every signature whose l= differs from
// what it hashed (dkim-verifier.js): a sender would choose what fills the
// node's output. Nothing else in this thread writes to the console.
console.log = () => undefined;

/** One job's message as a stream: chunks pushed in order, acknowledged once the verifier has room for more. */
class JobInput extends Readable {
  private unacknowledged = 0;
  private ended = false;
  constructor(private readonly job: number) {
    super();
  }
  add(chunk: Buffer | undefined, end: boolean): void {
    this.ended ||= end;
    if (chunk) {
      this.unacknowledged += chunk.length;
      if (this.push(chunk)) this.acknowledge();
    }
    if (end) this.push(null);
  }
  override _read(): void {
    this.acknowledge();
  }
  private acknowledge(): void {
    // Once the whole message is here the main thread has nothing more to send.
    if (!this.unacknowledged || this.ended) return;
    post({ type: 'ack', job: this.job, bytes: this.unacknowledged });
    this.unacknowledged = 0;
  }
}

const jobs = new Map<number, JobInput>();
const questions = new Map<number, { resolve: (answer: never) => void; reject: (err: Error) => void }>();
let nextQuestion = 0;

/** A job's DNS: asked of the resolver its authenticator was made with, in the main thread. */
const askMainThread = (job: number, name: string, rrtype: string) =>
  new Promise<Awaited<ReturnType<DNSResolver>>>((resolve, reject) => {
    const query = ++nextQuestion;
    questions.set(query, { resolve, reject });
    post({ type: 'dns', job, query, name, rrtype });
  });

/**
 * How long this thread reuses an answer the main thread gave, ms. Messages
 * from one sender ask the same three or four questions (SPF, DKIM key, DMARC)
 * within milliseconds of each other; each crossing to the main thread and
 * back cost both threads a wake-up and a copy (a CPU profile of `pnpm bench
 * inbound`). A second is nothing beside the main thread's cache
 * (`dns-cache.ts`, up to a minute), so no record is seen noticeably later.
 */
const REUSE_MS = 1000;
/** Answers that say the record does not exist, reused like the main thread's cache keeps them; other failures are asked again. */
const NEGATIVE = new Set(['ENOTFOUND', 'ENODATA']);
const recent = new Map<string, { at: number; job: number; answer: Promise<Awaited<ReturnType<DNSResolver>>> }>();

const resolverFor = (job: number, resolver: number | undefined): DNSResolver => async (name, rrtype) => {
  // A job whose resolver is not named (an older pool) reuses nothing.
  if (resolver === undefined) return askMainThread(job, name, rrtype);
  const key = `${resolver} ${rrtype.toUpperCase()} ${name.toLowerCase()}`;
  const now = performance.now();
  let entry = recent.get(key);
  if (!entry || now - entry.at > REUSE_MS) {
    const answer = askMainThread(job, name, rrtype);
    const fresh = { at: now, job, answer };
    entry = fresh;
    recent.delete(key); // re-inserted at the end: the map stays in order of asking
    recent.set(key, fresh);
    answer.catch((err: NodeJS.ErrnoException) => {
      if (!NEGATIVE.has(err?.code ?? '') && recent.get(key) === fresh) recent.delete(key);
    });
    // Old entries go as new ones come: the map holds about a second's worth of questions.
    for (const [k, e] of recent) {
      if (now - e.at <= REUSE_MS) break;
      recent.delete(k);
    }
  }
  // Each verifier gets its own copy (and its own error), as from the main thread.
  try {
    return structuredClone(await entry.answer);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // Another job's question fails with that job when it ends first (ECANCELLED): this job asks for itself.
    if (entry.job !== job && !NEGATIVE.has(e?.code ?? '')) return askMainThread(job, name, rrtype);
    throw Object.assign(new Error(e.message), { code: e.code });
  }
};

function start(job: number, { context, mta, resolver }: NonNullable<Extract<ToWorker, { type: 'data' }>['start']>): void {
  const input = new JobInput(job);
  jobs.set(job, input);
  verifyMessage(input, context, { resolver: resolverFor(job, resolver), mta }).then(
    (result) => jobs.delete(job) && post({ type: 'done', job, result }),
    (err: Error) => jobs.delete(job) && post({ type: 'failed', job, error: err.message }),
  );
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'data': {
      if (message.start) start(message.job, message.start);
      const data = message.data && Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength);
      return jobs.get(message.job)?.add(data, message.end === true);
    }
    case 'abort': {
      // mailauth stops reading once its input fails; its DNS answers still to come are dropped.
      const input = jobs.get(message.job);
      jobs.delete(message.job);
      input?.destroy(new Error('verification stopped'));
      return post({ type: 'aborted', job: message.job });
    }
    case 'dns-answer': {
      const waiting = questions.get(message.query);
      questions.delete(message.query);
      if (!waiting) return;
      if (message.error) return waiting.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
      return waiting.resolve(message.answer as never);
    }
  }
});
post({ type: 'ready' });
