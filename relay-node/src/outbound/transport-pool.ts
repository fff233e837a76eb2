// SMTP connections kept open per destination and reused for the next message
// to it, as Postfix's connection cache does: a new session per message costs a
// TCP (and TLS) handshake, a greeting and an EHLO before any mail moves.
// One nodemailer pooled transport per destination and set of session options;
// a destination left idle is closed.
import { createTransport, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';

export interface TransportPoolOptions {
  /** Sessions open at once to one destination. Default 5. */
  connectionsPerDestination?: number;
  /** Messages one session carries before it is closed and replaced. Default 100. */
  messagesPerConnection?: number;
  /** A destination with no message for this long is closed, ms. Default 30000. */
  idleMs?: number;
}

interface Entry { transport: Transporter; lastUsed: number; inFlight: number }

export class TransportPool {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly connections: number;
  private readonly messages: number;
  private readonly idleMs: number;

  constructor(options: TransportPoolOptions = {}) {
    this.connections = options.connectionsPerDestination ?? 5;
    this.messages = options.messagesPerConnection ?? 100;
    this.idleMs = options.idleMs ?? 30_000;
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
        transport: createTransport({ ...options, pool: true, maxConnections: this.connections, maxMessages: this.messages }),
        lastUsed: Date.now(),
        inFlight: 0,
      };
      this.entries.set(key, entry);
    }
    entry.inFlight++;
    try {
      return await entry.transport.sendMail(mail);
    } finally {
      entry.inFlight--;
      entry.lastUsed = Date.now();
    }
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
        entry.transport.close();
        this.entries.delete(key);
      }
    }
  }

  /** Every session closed; the pool stays usable. */
  closeAll() {
    for (const entry of this.entries.values()) entry.transport.close();
    this.entries.clear();
  }

  stop() {
    clearInterval(this.sweeper);
    this.closeAll();
  }
}
