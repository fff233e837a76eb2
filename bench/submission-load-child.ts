// `bench submission`'s load client, in a process of its own: `clients`
// sessions, each opened once (STARTTLS, then AUTH PLAIN when a password is
// given) and reused for message after message, as a smarthost client or an
// application's mail library keeps its connection. nodemailer's SMTP client
// (the relay node's dependency). Per message: the time from sending it to the
// 250 (or refusal).
import { createRequire } from 'node:module';
import { buildMessage } from './support/smtp-message.js';

export interface SubmissionLoadOptions {
  port: number;
  clients: number;
  total: number;
  timeLimitMs: number;
  size: number;
  from: string;
  to: string;
  /** AUTH PLAIN with this password (username `apikey`); none: no AUTH (Postfix trusts mynetworks). */
  password?: string;
}

export interface SubmissionLoadResult {
  accepted: number;
  refused: number;
  errors: number;
  elapsedMs: number;
  perSecond: number;
  latencyMs: { p50: number; p99: number };
  sampleProblem?: string;
}

/** The part of nodemailer's SMTPConnection used here. */
interface Connection {
  connect(cb: (err?: Error) => void): void;
  login(auth: { user: string; pass: string; method?: string }, cb: (err?: Error) => void): void;
  send(envelope: { from: string; to: string[] }, message: Buffer, cb: (err: (Error & { response?: string }) | null, info?: { response?: string }) => void): void;
  quit(): void;
  close(): void;
  on(event: 'error', fn: (err: Error) => void): void;
}
type ConnectionClass = new (o: Record<string, unknown>) => Connection;
const SMTPConnection = createRequire(new URL('../relay-node/package.json', import.meta.url))('nodemailer/lib/smtp-connection') as ConnectionClass;

const call = <T = void>(fn: (cb: (err?: Error | null, value?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));

export async function submissionLoad(o: SubmissionLoadOptions): Promise<SubmissionLoadResult> {
  const template = buildMessage(o.size, o.from, o.to);
  const latencies: number[] = [];
  const r = { accepted: 0, refused: 0, errors: 0, sampleProblem: undefined as string | undefined };
  let claimed = 0;
  const start = performance.now();
  const deadline = start + o.timeLimitMs;
  const claim = () => claimed < o.total && performance.now() < deadline && ++claimed > 0;

  async function session(): Promise<void> {
    const connection = new SMTPConnection({
      host: '127.0.0.1', port: o.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false },
      name: 'client.bench.test', connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000,
    });
    connection.on('error', () => undefined);
    try {
      await call((cb) => connection.connect(cb));
      if (o.password) await call((cb) => connection.login({ user: 'apikey', pass: o.password!, method: 'PLAIN' }, cb));
    } catch (e) {
      r.errors++;
      r.sampleProblem ??= (e as Error).message;
      connection.close();
      return;
    }
    while (claim()) {
      const n = claimed;
      const bytes = Buffer.concat([Buffer.from(template.header(n)), template.body, Buffer.from('\r\n')]);
      const sent = performance.now();
      try {
        await call((cb) => connection.send({ from: o.from, to: [o.to] }, bytes, (err) => cb(err)));
        r.accepted++;
        latencies.push(performance.now() - sent);
      } catch (e) {
        const response = (e as { response?: string }).response;
        if (response) r.refused++;
        else r.errors++;
        r.sampleProblem ??= response ?? (e as Error).message;
        if (!response) break; // the session is gone
      }
    }
    connection.quit();
  }

  await Promise.all(Array.from({ length: o.clients }, () => session()));
  const elapsedMs = performance.now() - start;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { ...r, elapsedMs, perSecond: r.accepted / (elapsedMs / 1000), latencyMs: { p50: at(0.5), p99: at(0.99) } };
}

// As a child process: one run per message, its result sent back.
if (process.send) {
  process.on('message', (m: { id: number; options: SubmissionLoadOptions }) => {
    submissionLoad(m.options).then(
      (result) => process.send!({ id: m.id, result }),
      (e: unknown) => process.send!({ id: m.id, error: e instanceof Error ? e.message : String(e) }),
    );
  });
}
