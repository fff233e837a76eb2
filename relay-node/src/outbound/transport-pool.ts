// SMTP connections kept open per destination and reused for the next message
// to it, as Postfix's connection cache does: a new session per message costs a
// TCP (and TLS) handshake, a greeting and an EHLO before any mail moves.
// One nodemailer pooled transport per destination and set of session options;
// a session left idle, or still open when the node stops, ends with QUIT (as
// an MTA's does), never with a dropped connection.
import { Readable } from 'node:stream';
import { createTransport, type SentMessageInfo, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';

export interface TransportPoolOptions {
  /** Sessions open at once to one destination. Default 5. */
  connectionsPerDestination?: number;
  /** Messages one session carries before it is closed and replaced. Default 100. */
  messagesPerConnection?: number;
  /** A session (and then its destination) with no message for this long says QUIT, ms. Default 30000. */
  idleMs?: number;
  /** How long a QUIT waits for the server's 221 before the connection is closed anyway, ms. Default 2000. */
  quitWaitMs?: number;
}

interface Entry { transport: Transporter; lastUsed: number; inFlight: number }

/** What nodemailer's pool (SMTPPool, `transport.transporter`) takes from a message it sends. */
interface RawSender {
  send(mail: RawMail, callback: (err: Error | null, info: SentMessageInfo) => void): unknown;
}
interface RawMail {
  data: { signal?: AbortSignal };
  message: {
    getEnvelope(): { from: string; to: string[] };
    messageId(): string;
    getHeader(name: string): string;
    createReadStream(): Readable;
  };
}

type RawOutgoing = { envelope: { from: string; to: string[] }; raw: Buffer; signal?: AbortSignal };

/** A message of signed bytes whose every line already ends in CRLF: nothing of nodemailer's own composing applies to it. */
function isSignedRaw(mail: Parameters<Transporter['sendMail']>[0]): mail is RawOutgoing {
  const { raw, envelope } = mail as Partial<RawOutgoing>;
  if (!raw || !Buffer.isBuffer(raw) || !envelope || typeof envelope.from !== 'string' || !Array.isArray(envelope.to)) return false;
  for (let at = raw.indexOf(10); at !== -1; at = raw.indexOf(10, at + 1)) if (at === 0 || raw[at - 1] !== 13) return false;
  return true;
}

/**
 * The signed bytes handed straight to the pool, as nodemailer's Mailer would
 * after composing a `raw` message: Mailer's compile step (a MailComposer and
 * a MimeNode around the bytes, its plugins, a stream pipeline) cost the main
 * thread about a tenth of a delivery and changes nothing in bytes that are
 * already CRLF. The pool reads the envelope, the Message-ID for its log, the
 * stream, and the abort signal; the last line break is ensured as Mailer's
 * `LastNewline` does.
 */
function sendRaw(pool: RawSender, mail: RawOutgoing): Promise<SentMessageInfo> {
  const last = mail.raw[mail.raw.length - 1];
  const bytes = last === 10 ? mail.raw : Buffer.concat([mail.raw, Buffer.from(last === 13 ? '\n' : '\r\n')]);
  const headerEnd = bytes.indexOf('\r\n\r\n');
  const messageId = /^message-id:[ \t]*(.*(?:\r\n[ \t].*)*)/im.exec(bytes.subarray(0, headerEnd === -1 ? bytes.length : headerEnd).toString('latin1'))?.[1]?.trim() ?? '';
  const message: RawMail['message'] = {
    // A fresh envelope each time: the SMTP connection writes its progress into it.
    getEnvelope: () => ({ from: mail.envelope.from, to: [...mail.envelope.to] }),
    messageId: () => messageId,
    getHeader: (name) => (name.toLowerCase() === 'message-id' ? messageId : ''),
    createReadStream: () => Readable.from([bytes], { objectMode: false }),
  };
  return new Promise((resolve, reject) => {
    pool.send({ data: { signal: mail.signal }, message }, (err, info) => (err ? reject(err) : resolve(info)));
  });
}

/** What this file uses of a nodemailer pool's session (PoolResource and its SMTPConnection). */
interface PooledSession {
  available: boolean;
  connection?: { quit(): void; close(): void; once(event: 'end', listener: () => void): unknown };
}

export class TransportPool {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly connections: number;
  private readonly messages: number;
  private readonly idleMs: number;
  private readonly quitWaitMs: number;

  constructor(options: TransportPoolOptions = {}) {
    this.connections = options.connectionsPerDestination ?? 5;
    this.messages = options.messagesPerConnection ?? 100;
    this.idleMs = options.idleMs ?? 30_000;
    this.quitWaitMs = options.quitWaitMs ?? 2000;
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(1000, this.idleMs / 2));
    this.sweeper.unref();
  }

  /**
   * Sends one message over a reused session to the destination `options`
   * describe (the same options give the same sessions).
   */
  async send(options: SMTPPool.Options, mail: Parameters<Transporter['sendMail']>[0]) {
    const key = JSON.stringify(options, (_k, v: unknown) => (Array.isArray(v) && v.length > 3 ? `[${v.length} items]` : v));
    let entry = this.entries.get(key);
    if (!entry) {
      entry = {
        // nodemailer's own idle timer ends each idle session with QUIT (the sweeper below retires the rest).
        transport: createTransport({ ...options, pool: true, maxConnections: this.connections, maxMessages: this.messages, idleTimeout: this.idleMs }),
        lastUsed: Date.now(),
        inFlight: 0,
      };
      this.entries.set(key, entry);
    }
    entry.inFlight++;
    try {
      const pool = (entry.transport as unknown as { transporter?: RawSender }).transporter;
      if (pool && typeof pool.send === 'function' && isSignedRaw(mail)) return await sendRaw(pool, mail);
      return await entry.transport.sendMail(mail);
    } finally {
      entry.inFlight--;
      entry.lastUsed = Date.now();
    }
  }

  /** Open sessions to each destination held (metrics: how many, not to whom). */
  destinationConnections(): number[] {
    return [...this.entries.values()].map((entry) =>
      ((entry.transport as unknown as { transporter?: { _connections?: PooledSession[] } }).transporter?._connections ?? []).length);
  }

  /** Closes the sessions of a destination that failed, so the next message starts afresh. */
  forget(options: SMTPPool.Options) {
    const key = JSON.stringify(options, (_k, v: unknown) => (Array.isArray(v) && v.length > 3 ? `[${v.length} items]` : v));
    const entry = this.entries.get(key);
    if (entry && entry.inFlight === 0) {
      entry.transport.close();
      this.entries.delete(key);
    }
  }

  private closeIdle() {
    const now = Date.now();
    for (const [key, entry] of this.entries) {
      if (entry.inFlight === 0 && now - entry.lastUsed >= this.idleMs) {
        this.entries.delete(key);
        void this.retire(entry);
      }
    }
  }

  /** Every session ended with QUIT (bounded by `quitWaitMs`); the pool stays usable. */
  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((entry) => this.retire(entry)));
  }

  /** For node shutdown: no more sweeps, every session ended with QUIT. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.closeAll();
  }

  /**
   * QUIT on each idle session, then the transport closed (a session still
   * delivering finishes first). nodemailer's close() alone drops idle sessions
   * without a word, and offers no public QUIT: its pool's session list is
   * private, so it is read here, as its own idle timer does it.
   */
  private retire(entry: Entry): Promise<void> {
    const pool = (entry.transport as unknown as { transporter?: { _connections?: PooledSession[] } }).transporter;
    const idle = (pool?._connections ?? []).filter((session) => session.available && session.connection);
    const quits = idle.map((session) => new Promise<void>((resolve) => {
      const connection = session.connection!;
      // Not handed another message while it says goodbye (nodemailer's idle timer does the same).
      session.available = false;
      const timer = setTimeout(() => {
        connection.close();
        resolve();
      }, this.quitWaitMs);
      timer.unref();
      connection.once('end', () => {
        clearTimeout(timer);
        resolve();
      });
      connection.quit();
    }));
    entry.transport.close();
    return Promise.all(quits).then(() => undefined);
  }
}
