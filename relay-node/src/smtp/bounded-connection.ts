// smtp-server 3.21 with what it has no option for: the delay before the
// greeting (fixed at 100 ms in SMTPConnection.init), replies whose text
// already carries its enhanced status code, and the bounds of one session
// (its place among the open sessions, its length, its NOOP and RSET count,
// the count of its commands outside a mail transaction).
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import type { SessionSlot, SessionSlots } from './session-slots.js';
import { hasEnhancedCode } from './smtp-reply.js';
import { tagClient } from './listener-errors.js';

/** What one session may hold and do (the listener's `max_*` settings); a 0 disables that bound. */
export interface SessionBounds {
  /** `greeting_delay` in ms; 0 greets at once. */
  greetingDelayMs: number;
  /** `max_sessions` and `max_sessions_per_ip`, shared by every session of the listener. */
  slots: SessionSlots;
  /** `max_session_duration` in ms. */
  maxDurationMs: number;
  /**
   * How long a session past `maxDurationMs` may still spend receiving a message's data before it is
   * cut off with `421 4.4.2` (nothing stored, nothing answered 250). `sessionBounds` (listener-options.ts)
   * gives the smaller of `idle_timeout` and 60 s.
   */
  dataGraceMs: number;
  /** `max_noop_rset_per_session`. */
  maxNoopRset: number;
  /** `max_commands_per_session`: commands other than MAIL, RCPT, DATA and BDAT. */
  maxCommands: number;
}

/** The commands of a mail transaction: bounded by `max_messages_per_session` and the recipient cap, not counted. */
const TRANSACTION_COMMANDS = new Set(['MAIL', 'RCPT', 'DATA', 'BDAT']);

const REFUSED_BY: Record<'total' | 'address', string> = {
  total: '4.7.0 Too many open sessions on this server, try again later',
  address: '4.7.0 Too many open sessions from your address, try again later',
};

/**
 * One SMTP session. `init` is the library's own but for the delay (its "talk
 * too soon" pause is a literal `setTimeout(..., 100)`) and for the session
 * caps, checked before the greeting. Overriding these few methods (and
 * `connect`, which is where the library names the class) is less fragile than
 * patching timers or the prototype.
 */
export class BoundedConnection extends SMTPConnection {
  private slot: SessionSlot | null = null;
  private durationTimer: NodeJS.Timeout | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  /** Past `maxDurationMs`, waiting for a message in progress to be answered. */
  private overtime = false;
  private noopRset = 0;
  private commands = 0;

  constructor(
    server: SMTPServer,
    socket: Socket | TLSSocket,
    options: SMTPConnectionOptions | null | undefined,
    private readonly bounds: SessionBounds,
  ) {
    super(server, socket, options);
  }

  override init(): void {
    // A place is taken at once (a session still in its TLS handshake holds a
    // descriptor too) and given back when the socket closes (`_onClose`).
    const taken = this._socket.destroyed ? null : this.bounds.slots.take(this.remoteAddress);
    if (taken && 'refused' in taken && this.needsUpgrade) {
      // Implicit TLS: a 421 could only follow a handshake, which is work spent on
      // a client refused anyway. Closed before any TLS byte; it held no place.
      this._socket.destroy();
      return this._onClose();
    }
    if (taken && !('refused' in taken)) this.slot = taken;
    if (this.bounds.maxDurationMs > 0) {
      this.durationTimer = setTimeout(() => this.onDurationReached(), this.bounds.maxDurationMs);
      this.durationTimer.unref();
    }
    // Same as SMTPConnection.init in 3.21.6, with the caps and the configured delay.
    this._setListeners(() => {
      if (taken && 'refused' in taken) return this.send(421, REFUSED_BY[taken.refused]); // 421 closes
      // Until connectionReady runs, anything the client sends is refused as talking too soon.
      if (this.bounds.greetingDelayMs <= 0) return this.connectionReady();
      setTimeout(() => this.connectionReady(), this.bounds.greetingDelayMs).unref();
    });
  }

  /** The socket closed, however the session ended: the one place its slot and timer are given back. */
  override _onClose(): void {
    super._onClose();
    this.slot?.release();
    if (this.durationTimer) clearTimeout(this.durationTimer);
    if (this.graceTimer) clearTimeout(this.graceTimer);
  }

  /**
   * Every command line passes here. One outside a transaction past
   * `maxCommands` ends the session: pipelined EHLOs (or HELP, VRFY, unknown
   * commands) cost the client nothing and would otherwise be answered for
   * ever. Not counted: the lines of an AUTH exchange (`_nextHandler`), what
   * the library drops unanswered during a TLS upgrade or refuses before the
   * greeting.
   */
  override _onCommand(command: Buffer, callback?: () => void): void {
    if (this.bounds.maxCommands > 0 && this._ready && !this._upgrading && !this._nextHandler) {
      const name = (command || '').toString().split(' ').shift()!.toUpperCase();
      if (!TRANSACTION_COMMANDS.has(name) && ++this.commands > this.bounds.maxCommands) {
        // The 421 closes the session; commands already pipelined behind it get no answer.
        if (this.commands === this.bounds.maxCommands + 1) this.send(421, `4.7.0 Too many commands outside a mail transaction in this session (at most ${this.bounds.maxCommands}), closing`);
        return;
      }
    }
    super._onCommand(command, callback);
  }

  override handler_NOOP(command: Buffer, callback: () => void): void {
    if (this.overNoopRset()) return callback();
    super.handler_NOOP(command, callback);
  }

  override handler_RSET(command: Buffer, callback: () => void): void {
    if (this.overNoopRset()) return callback();
    super.handler_RSET(command, callback);
  }

  /**
   * With ENHANCEDSTATUSCODES on, the library puts its table's code for the
   * reply code in front of every text, including our hooks' errors; its
   * table says 5.2.2 for 552 where we mean 5.3.4, 5.1.1 for 550 where DMARC
   * means 5.7.1. A text that starts with its own code is sent as it is.
   *
   * A session past its duration ends after the reply that finishes what it
   * was doing (the answer to a message's data, a hook's answer).
   */
  override send(code: number, data?: string | string[] | null, context?: string | false): void {
    super.send(code, data, typeof data === 'string' && hasEnhancedCode(data) ? false : context);
    if (this.overtime && code !== 421 && !this._dataStream) this.endOvertime();
  }

  /** NOOP and RSET keep a session alive and cost nothing to send: one past the cap ends the session. */
  private overNoopRset(): boolean {
    if (this.bounds.maxNoopRset <= 0 || ++this.noopRset <= this.bounds.maxNoopRset) return false;
    this.send(421, `4.7.0 Too many NOOP and RSET commands in this session (at most ${this.bounds.maxNoopRset}), closing`);
    return true;
  }

  /**
   * A message whose data is arriving gets `dataGraceMs` to end and be answered
   * first; one received in full is answered however long its storing takes.
   */
  private onDurationReached(): void {
    this.overtime = true;
    if (this.receivingData()) {
      this.graceTimer = setTimeout(() => this.onGraceOver(), this.bounds.dataGraceMs);
      this.graceTimer.unref();
    } else if (!this._dataStream && !this._handlerPending) {
      this.endOvertime();
    }
  }

  /**
   * Still receiving data: a client trickling a byte per idle timeout would
   * otherwise hold the session for ever. The partial message is dropped (the
   * socket's close aborts the data stream, and the store with it) and the
   * socket destroyed once the 421 is written, not left for the client to close.
   */
  private onGraceOver(): void {
    if (!this.receivingData() || this._closing || this._closed) return;
    this.overtime = false;
    const socket = this._socket;
    this.send(421, '4.4.2 Session reached its maximum duration while the message was still arriving, closing; send it again in a new session');
    if (socket.writableFinished || socket.destroyed) socket.destroy();
    else socket.once('finish', () => socket.destroy()); // the library's close deadline bounds a client that never reads
  }

  /** The client still owes part of a message's data (not: the data is in and being stored). */
  private receivingData(): boolean {
    return !!this._dataStream && !!this._parser && this._parser._dataMode;
  }

  private endOvertime(): void {
    if (this._closing || this._closed) return;
    this.overtime = false;
    this.send(421, '4.4.2 Session reached its maximum duration, closing; connect again to go on');
  }
}

/** smtp-server whose sessions are BoundedConnections. */
export class BoundedSmtpServer extends SMTPServer {
  constructor(
    options: SMTPServerOptions,
    /** Protected: the submission listener's server makes its own kind of session with them. */
    protected readonly bounds: SessionBounds,
  ) {
    super(options);
  }

  /** Sessions holding a place now, all together or from one address (IPv6: its /64). */
  openSessions(address?: string): number {
    return this.bounds.slots.open(address);
  }

  /**
   * Starts a session on an accepted socket: the listener's own and the PROXY
   * front's (`connect(socket, { remoteAddress, remotePort })`), so the caps
   * count the client's address, not the balancer's. Mirrors
   * SMTPServer.connect in 3.21.6.
   */
  override connect(socket: Socket | TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new BoundedConnection(this, socket, socketOptions, this.bounds);
    this.connections.add(connection);
    // The client's address and port on every error it reports (a failed TLS handshake names who failed it).
    connection.on('error', (err: Error) => this._onError(tagClient(err, connection)));
    connection.on('connect', (data) => this._onClientConnect(data));
    connection.init();
  }
}
