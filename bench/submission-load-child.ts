// `bench submission`'s load client, in a process of its own: `clients`
// sessions, each opened once (STARTTLS, then AUTH PLAIN when a password is
// given) and reused for message after message (or, with `perConnection`, a
// new session every so many messages), as a smarthost client or an
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
  /** Messages per connection before it is closed and a new one opened (STARTTLS and AUTH again); 0 or absent: one connection for all. */
  perConnection?: number;
}

export interface SubmissionLoadResult {
  accepted: number;
  refused: number;
  errors: number;
  /** Sessions opened again after the server ended one (421 at `submission.max_messages_per_session`). */
  reconnects: number;
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

/**
 * The number in each message's Message-ID and Subject: never the same twice in
 * this process, whatever its runs and reconnects. (The claim counter goes back
 * by one for a 421'd message, so numbering by it gave a message sent at the
 * same time the same Message-ID, which the node rightly answers as the same
 * message, and a second run of the process repeated the first's.)
 */
let serial = 0;

const call = <T = void>(fn: (cb: (err?: Error | null, value?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));

export async function submissionLoad(o: SubmissionLoadOptions): Promise<SubmissionLoadResult> {
  const template = buildMessage(o.size, o.from, o.to);
  const latencies: number[] = [];
  const r = { accepted: 0, refused: 0, errors: 0, reconnects: 0, sampleProblem: undefined as string | undefined };
  let claimed = 0;
  const start = performance.now();
  const deadline = start + o.timeLimitMs;
  const claim = () => claimed < o.total && performance.now() < deadline && ++claimed > 0;

  /** One connection: STARTTLS (and AUTH), then messages until the total, the time bound or the server ends it. */
  async function connection(): Promise<'done' | 'again'> {
    const smtp = new SMTPConnection({
      host: '127.0.0.1', port: o.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false },
      name: 'client.bench.test', connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 60_000,
    });
    smtp.on('error', () => undefined);
    try {
      await call((cb) => smtp.connect(cb));
      if (o.password) await call((cb) => smtp.login({ user: 'apikey', pass: o.password!, method: 'PLAIN' }, cb));
    } catch (e) {
      r.errors++;
      r.sampleProblem ??= (e as Error).message;
      smtp.close();
      return 'done';
    }
    let sentHere = 0;
    try {
      while (claim()) {
        // One message per connection (or `perConnection`): the next goes over a new session, as an application that connects per mail.
        if (o.perConnection && sentHere >= o.perConnection) {
          claimed--;
          return 'again';
        }
        sentHere++;
        const bytes = Buffer.concat([Buffer.from(template.header(++serial)), template.body, Buffer.from('\r\n')]);
        const sent = performance.now();
        try {
          await call((cb) => smtp.send({ from: o.from, to: [o.to] }, bytes, (err) => cb(err)));
          r.accepted++;
          latencies.push(performance.now() - sent);
        } catch (e) {
          const response = (e as { response?: string }).response;
          // A session the server ends (`max_messages_per_session`, 421) is opened again, as a mail client does; the message goes again.
          if (response?.startsWith('421')) {
            claimed--;
            r.reconnects++;
            return 'again';
          }
          if (response) r.refused++;
          else r.errors++;
          r.sampleProblem ??= response ?? (e as Error).message;
          if (!response) return 'done'; // the session is gone
        }
      }
      return 'done';
    } finally {
      smtp.quit();
    }
  }

  async function session(): Promise<void> {
    while ((await connection()) === 'again');
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
