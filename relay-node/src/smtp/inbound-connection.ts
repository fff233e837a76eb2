// smtp-server 3.21 with two things it has no option for: the delay before
// the greeting (fixed at 100 ms in SMTPConnection.init) and replies whose
// text already carries its enhanced status code.
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection.js';
import { ENHANCED_CODE } from './smtp-reply.js';

/**
 * One SMTP session. `init` is the library's own but for the delay: its
 * "talk too soon" pause is a literal `setTimeout(..., 100)` with no option,
 * and it costs a tenth of a second on every new connection. Overriding the
 * one method (and `connect`, which is where the library names the class) is
 * less fragile than patching the timer or the prototype.
 */
export class InboundConnection extends SMTPConnection {
  constructor(
    server: SMTPServer,
    socket: Socket | TLSSocket,
    options: SMTPConnectionOptions | null | undefined,
    private readonly greetingDelayMs: number,
  ) {
    super(server, socket, options);
  }

  override init(): void {
    // Same as SMTPConnection.init in 3.21.6, with the configured delay.
    this._setListeners(() => {
      const { maxClients } = this._server.options;
      if (maxClients && this._server.connections.size > maxClients) {
        return this.send(421, `${this.name} Too many connected clients, try again in a moment`, false);
      }
      // Until connectionReady runs, anything the client sends is refused as talking too soon.
      if (this.greetingDelayMs <= 0) return this.connectionReady();
      setTimeout(() => this.connectionReady(), this.greetingDelayMs).unref();
    });
  }

  /**
   * With ENHANCEDSTATUSCODES on, the library puts its table's code for the
   * reply code in front of every text, including our hooks' errors; its
   * table says 5.2.2 for 552 where we mean 5.3.4, 5.1.1 for 550 where DMARC
   * means 5.7.1. A text that starts with its own code is sent as it is.
   */
  override send(code: number, data?: string | string[] | null, context?: string | false): void {
    super.send(code, data, typeof data === 'string' && ENHANCED_CODE.test(data) ? false : context);
  }
}

/** smtp-server whose sessions are InboundConnections. */
export class InboundSmtpServer extends SMTPServer {
  constructor(
    options: SMTPServerOptions,
    private readonly greetingDelayMs: number,
  ) {
    super(options);
  }

  /**
   * Starts a session on an accepted socket: the listener's own and the PROXY
   * front's (`connect(socket, { remoteAddress, remotePort })`). Mirrors
   * SMTPServer.connect in 3.21.6.
   */
  override connect(socket: Socket | TLSSocket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new InboundConnection(this, socket, socketOptions, this.greetingDelayMs);
    this.connections.add(connection);
    connection.on('error', (err: Error) => this._onError(err));
    connection.on('connect', (data) => this._onClientConnect(data));
    connection.init();
  }
}
