// The submission listener's session: an inbound session (session caps,
// greeting delay, replies with their own enhanced codes) that takes AUTH only
// over TLS, except from a loopback client. smtp-server's `allowInsecureAuth`
// is one switch for every client; this is the same rule decided per
// connection, on the client's address (the PROXY header's behind a balancer).
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { SMTPServerOptions } from 'smtp-server';
import type { SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { nonPublicRange } from '@edgemail/shared';
import { InboundConnection, InboundSmtpServer } from '../inbound/listener/index.js';
import type { SessionBounds } from '../inbound/listener/inbound-connection.js';

/** 127.0.0.0/8 and ::1: the same machine, where no one can read the password on the wire. */
export const isLoopback = (address: string): boolean => nonPublicRange(address) === 'loopback';

export class SubmissionConnection extends InboundConnection {
  /** RFC 4954 section 4: `538 5.7.11` when the mechanism needs an encrypted channel first. */
  override handler_AUTH(command: Buffer, callback: () => void): void {
    if (!this.secure && !isLoopback(this.remoteAddress)) {
      this.send(538, '5.7.11 Encryption required: issue STARTTLS before AUTH (plain-text AUTH is taken from loopback clients only)');
      return callback();
    }
    super.handler_AUTH(command, callback);
  }
}

/** smtp-server whose sessions are SubmissionConnections. */
export class SubmissionSmtpServer extends InboundSmtpServer {
  constructor(options: SMTPServerOptions, bounds: SessionBounds) {
    // The library would refuse AUTH before STARTTLS to everyone; SubmissionConnection decides per client.
    super({ ...options, allowInsecureAuth: true }, bounds);
  }

  /** As InboundSmtpServer.connect, with a SubmissionConnection. */
  override connect(socket: Socket | TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new SubmissionConnection(this, socket, socketOptions, this.bounds);
    this.connections.add(connection);
    connection.on('error', (err: Error) => this._onError(err));
    connection.on('connect', (data) => this._onClientConnect(data));
    connection.init();
  }
}
