// A small SMTP load client on raw sockets: N concurrent sessions, M messages
// per connection, a fixed total and a time bound. Per message it measures the
// accept latency: from writing DATA's final <CRLF>.<CRLF> to reading the
// reply, with process.hrtime.bigint(). It drives every target of
// `pnpm bench inbound` (smtp-sink, Postfix, the relay node) so their latency
// figures come from one method. It runs in a child process (`startSmtpLoader`),
// so it never shares an event loop with the listener or the Neon bridge.
import { fork } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { buildMessage } from './smtp-message.js';

export interface SmtpLoadOptions {
  host: string;
  port: number;
  /** Concurrent sessions. */
  connections: number;
  /** Messages sent over one connection before QUIT; 1 opens a connection per message. */
  perConnection: number;
  /** Messages to send in all. */
  total: number;
  /** No new message is started after this; those under way finish. */
  timeLimitMs: number;
  /** Message size in bytes, headers included. */
  size: number;
  from: string;
  to: string;
  helo: string;
  /** Sign every message with this key (one DKIM signature, the same for all: support/dkim-signature.ts). */
  dkim?: { domain: string; selector: string; privateKey: string };
}

export interface SmtpLoadResult {
  /** Messages whose DATA was sent (or that failed on the way). */
  attempted: number;
  /** Answered 250 after the final dot. */
  accepted: number;
  /** Answered anything else at MAIL, RCPT, DATA or after the dot. */
  refused: number;
  /** Lost to a socket error or a reply timeout. */
  errors: number;
  connections: number;
  elapsedMs: number;
  /** accepted / elapsed. */
  perSecond: number;
  latencyMs: { p50: number; p99: number; max: number; mean: number };
  /** The time bound stopped the run before `total` was reached. */
  timedOut: boolean;
  sampleRefusal?: string;
  sampleError?: string;
  /** Wall-clock time (Date.now()) of the first 250 after a dot: where the pipeline's end-to-end time starts. */
  firstAcceptedAt?: number;
}

const REPLY_TIMEOUT_MS = 30_000;

/** The load client in a child process of its own, reused across runs so its JIT stays warm. */
export interface SmtpLoader {
  run(options: SmtpLoadOptions): Promise<SmtpLoadResult>;
  close(): void;
}

/** Starts the child process (same Node flags as this one, so tsx loads it). */
export function startSmtpLoader(): SmtpLoader {
  const child = fork(new URL('./smtp-load-child.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, { resolve: (r: SmtpLoadResult) => void; reject: (e: Error) => void }>();
  let next = 0;
  let exited: Error | undefined;
  child.on('message', (m: { id: number; result?: SmtpLoadResult; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.result) p?.resolve(m.result);
    else p?.reject(new Error(`SMTP load client: ${m.error}`));
  });
  child.once('exit', (code) => {
    exited = new Error(`SMTP load client exited (${code})`);
    for (const p of pending.values()) p.reject(exited);
    pending.clear();
  });
  return {
    run(options) {
      if (exited) return Promise.reject(exited);
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ id, options });
      });
    },
    close() {
      if (!exited) child.kill();
    },
  };
}

/** The load itself; use `startSmtpLoader` unless already in a spare process. */
export async function smtpLoad(o: SmtpLoadOptions): Promise<SmtpLoadResult> {
  const message = buildMessage(o.size, o.from, o.to, o.dkim);
  const latencies = new Float64Array(o.total);
  const r = { attempted: 0, accepted: 0, refused: 0, errors: 0, connections: 0 } as Omit<SmtpLoadResult, 'elapsedMs' | 'perSecond' | 'latencyMs' | 'timedOut'>;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(o.timeLimitMs) * 1_000_000n;
  let timedOut = false;
  let sequence = 0;
  /** Takes one message off the total; false when it is spent or time is up. */
  const claim = () => {
    if (r.attempted >= o.total) return false;
    if (process.hrtime.bigint() > deadline) { timedOut = true; return false; }
    r.attempted++;
    return true;
  };

  async function session(): Promise<void> {
    // A connection opens only for a message that has been claimed.
    let consecutiveErrors = 0;
    while (claim()) {
      let inFlight = true;
      let socket: Socket | undefined;
      try {
        socket = await open(o.host, o.port);
        r.connections++;
        const reply = replies(socket);
        await expect(reply, '220', 'greeting');
        socket.write(`EHLO ${o.helo}\r\n`);
        await expect(reply, '250', 'EHLO');
        for (let n = 0; ; n++) {
          if (n > 0) {
            if (n >= o.perConnection || !claim()) break;
            inFlight = true;
          }
          socket.write(`MAIL FROM:<${o.from}>\r\n`);
          await expect(reply, '250', 'MAIL FROM');
          socket.write(`RCPT TO:<${o.to}>\r\n`);
          await expect(reply, '250', 'RCPT TO');
          socket.write('DATA\r\n');
          await expect(reply, '354', 'DATA');
          const header = message.header(++sequence);
          socket.cork();
          socket.write(header);
          socket.write(message.body);
          const sentAt = process.hrtime.bigint();
          socket.write('\r\n.\r\n');
          socket.uncork();
          const answer = await reply();
          const tookMs = Number(process.hrtime.bigint() - sentAt) / 1e6;
          inFlight = false;
          if (answer.startsWith('250')) { r.firstAcceptedAt ??= Date.now(); latencies[r.accepted++] = tookMs; }
          else { r.refused++; r.sampleRefusal ??= `after the dot: ${answer}`; }
        }
        socket.write('QUIT\r\n');
        await reply().catch(() => '');
        consecutiveErrors = 0;
      } catch (e) {
        if (e instanceof Refused) { r.refused += inFlight ? 1 : 0; r.sampleRefusal ??= e.message; consecutiveErrors = 0; }
        else { r.errors += inFlight ? 1 : 0; r.sampleError ??= (e as Error).message; consecutiveErrors++; }
        // A dead target would otherwise spin through the whole total at once.
        if (consecutiveErrors >= 20) return;
      } finally {
        socket?.destroy();
      }
    }
  }

  await Promise.all(Array.from({ length: o.connections }, () => session()));
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  return { ...r, elapsedMs, perSecond: r.accepted / (elapsedMs / 1000), latencyMs: summarise(latencies.subarray(0, r.accepted)), timedOut };
}

/** A reply other than the one the step expects (a 4xx or 5xx): the message counts as refused. */
class Refused extends Error {}

async function expect(reply: () => Promise<string>, code: string, step: string): Promise<void> {
  const answer = await reply();
  if (!answer.startsWith(code)) throw new Refused(`${step}: ${answer}`);
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, noDelay: true });
    socket.once('connect', () => { socket.off('error', reject); resolve(socket); });
    socket.once('error', reject);
  });
}

/** Reads whole SMTP replies (multi-line ones joined), one per call, in order. */
function replies(socket: Socket): () => Promise<string> {
  let buffered = '';
  let lines: string[] = [];
  const ready: string[] = [];
  const waiting: { resolve: (s: string) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];
  let failure: Error | undefined;
  const deliver = () => {
    while (ready.length && waiting.length) {
      const w = waiting.shift()!;
      clearTimeout(w.timer);
      w.resolve(ready.shift()!);
    }
  };
  const fail = (e: Error) => {
    failure ??= e;
    for (const w of waiting.splice(0)) { clearTimeout(w.timer); w.reject(failure); }
  };
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let eol: number;
    while ((eol = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, eol).replace(/\r$/, '');
      buffered = buffered.slice(eol + 1);
      lines.push(line);
      // "250-..." continues; "250 ..." or a bare "250" ends the reply.
      if (line.length <= 3 || line[3] === ' ') { ready.push(lines.join('\n')); lines = []; }
    }
    deliver();
  });
  socket.on('error', (e) => fail(e));
  socket.on('close', () => fail(new Error('connection closed by the server')));
  return () => {
    if (ready.length) return Promise.resolve(ready.shift()!);
    if (failure) return Promise.reject(failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = waiting.findIndex((w) => w.timer === timer);
        if (i >= 0) waiting.splice(i, 1);
        reject(new Error(`no reply within ${REPLY_TIMEOUT_MS / 1000}s`));
      }, REPLY_TIMEOUT_MS);
      waiting.push({ resolve, reject, timer });
    });
  };
}

function summarise(xs: Float64Array): SmtpLoadResult['latencyMs'] {
  if (!xs.length) return { p50: NaN, p99: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(xs).sort();
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  const at = (q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]!, mean: xs.reduce((a, b) => a + b, 0) / xs.length };
}
