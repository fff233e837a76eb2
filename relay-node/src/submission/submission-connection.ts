// The submission listener's session: a bounded session (session caps,
// greeting delay, replies with their own enhanced codes) that takes AUTH only
// over TLS, except from a loopback client. smtp-server's `allowInsecureAuth`
// is one switch for every client; this is the same rule decided per
// connection, on the client's address (the PROXY header's behind a balancer).
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { SMTPServerOptions } from 'smtp-server';
import type { SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { nonPublicRange } from '@edgemail/shared';
import { BoundedConnection, BoundedSmtpServer, tagClient, type SessionBounds } from '../smtp/index.js';

/** 127.0.0.0/8 and ::1: the same machine, where no one can read the password on the wire. */
export const isLoopback = (address: string): boolean => nonPublicRange(address) === 'loopback';

/** RFC 4648 base64 as RFC 4954 asks for it: the alphabet, padded to a multiple of 4; `=` (an empty response) too. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
export const isBase64 = (text: string): boolean => text === '=' || (text.length > 0 && BASE64.test(text));
const MALFORMED = '5.5.2 Malformed AUTH response: not valid base64 (RFC 4954)';

export class SubmissionConnection extends BoundedConnection {
  /**
   * RFC 4954 section 4: `538 5.7.11` when the mechanism needs an encrypted
   * channel first; `501 5.5.2` for an initial response (`AUTH PLAIN <…>`)
   * or a continuation line that is not base64. The library decodes leniently,
   * so a malformed token would otherwise reach the edge as a password no key
   * can be, and come back as a temporary failure (`454`) the client retries.
   */
  override handler_AUTH(command: Buffer, callback: () => void): void {
    if (!this.secure && !isLoopback(this.remoteAddress)) {
      this.send(538, '5.7.11 Encryption required: issue STARTTLS before AUTH (plain-text AUTH is taken from loopback clients only)');
      return callback();
    }
    const [, method = '', initial, ...rest] = command.toString().trim().split(/\s+/);
    const sasl = ['PLAIN', 'LOGIN'].includes(method.toUpperCase());
    if (sasl && !this.session.user && rest.length === 0 && initial !== undefined && !isBase64(initial)) {
      this.send(501, MALFORMED);
      return callback();
    }
    super.handler_AUTH(command, callback);
    if (sasl) this.strictContinuation();
  }

  /** The next line of the AUTH exchange (after a 334) must be base64 too, or `*` (the client cancels). */
  private strictContinuation(): void {
    const next = this._nextHandler;
    if (!next) return;
    this._nextHandler = (command: Buffer, callback: () => void) => {
      const line = command.toString().trim();
      if (line !== '*' && !isBase64(line)) {
        this.send(501, MALFORMED);
        return callback();
      }
      next.call(this, command, callback);
      this.strictContinuation(); // AUTH LOGIN asks for the password next
    };
  }
}

/** smtp-server whose sessions are SubmissionConnections. */
export class SubmissionSmtpServer extends BoundedSmtpServer {
  constructor(options: SMTPServerOptions, bounds: SessionBounds) {
    // The library would refuse AUTH before STARTTLS to everyone; SubmissionConnection decides per client.
    super({ ...options, allowInsecureAuth: true }, bounds);
  }

  /** As BoundedSmtpServer.connect, with a SubmissionConnection. */
  override connect(socket: Socket | TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new SubmissionConnection(this, socket, socketOptions, this.bounds);
    this.connections.add(connection);
    connection.on('error', (err: Error) => this._onError(tagClient(err, connection)));
    connection.on('connect', (data) => this._onClientConnect(data));
    connection.init();
  }
}
