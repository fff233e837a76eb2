// A real SMTP client for listener tests: nodemailer's SMTPConnection, one
// session per call (or several messages in one session), answering the
// server's final reply or its refusal.
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import SMTPConnection from 'nodemailer/lib/smtp-connection';

export interface SendOptions {
  port: number;
  host?: string;
  from: string | false;
  to: string | string[];
  message: string | Buffer | Readable;
  /** Declared in MAIL FROM SIZE= when the server advertises SIZE. */
  size?: number;
  /** Source address of the connection (any 127.x.y.z works on Linux loopback). */
  localAddress?: string;
  /** `starttls` requires it, `implicit` starts in TLS, `none` never upgrades. Default `none`. */
  tls?: 'none' | 'starttls' | 'implicit';
  /** SNI name and EHLO name. */
  servername?: string;
  helo?: string;
}

export interface SendResult {
  /** The server's reply to the message (`250 ...`) when accepted. */
  response?: string;
  /** The refusal: reply code and text, and the command it answered. */
  error?: { responseCode?: number; response?: string; command?: string; code?: string; message: string };
  /** The session ran over TLS. */
  secure: boolean;
}

export type ConnectOptions = Omit<SendOptions, 'from' | 'to' | 'message' | 'size'> & {
  /** An open socket to speak SMTP on (one that has already sent a PROXY header, say) instead of connecting. */
  connection?: Socket;
};

function connectionFor(options: ConnectOptions): SMTPConnection {
  const mode = options.tls ?? 'none';
  return new SMTPConnection({
    host: options.host ?? '127.0.0.1',
    port: options.port,
    connection: options.connection,
    secure: mode === 'implicit',
    requireTLS: mode === 'starttls',
    ignoreTLS: mode === 'none',
    localAddress: options.localAddress,
    name: options.helo ?? 'client.test',
    servername: options.servername,
    tls: { rejectUnauthorized: false },
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 15_000,
  });
}

/** Opens a session, sends one message, quits. Never throws for an SMTP refusal. */
export function sendMessage(options: SendOptions): Promise<SendResult> {
  const connection = connectionFor(options);
  return new Promise((resolve) => {
    let done = false;
    const finish = (result: Omit<SendResult, 'secure'>) => {
      if (done) return;
      done = true;
      const secure = connection.secureConnection || (connection as unknown as { _socket?: { encrypted?: boolean } })._socket?.encrypted === true;
      connection.quit();
      connection.close();
      resolve({ ...result, secure });
    };
    connection.on('error', (err: Error) => finish({ error: describe(err) }));
    connection.connect((err) => {
      if (err) return finish({ error: describe(err) });
      connection.send({ from: options.from, to: options.to, size: options.size }, options.message, (sendErr, info) => {
        if (sendErr) return finish({ error: describe(sendErr) });
        finish({ response: info?.response });
      });
    });
  });
}

export interface SmtpSession {
  /** One message in this session; a refusal comes back as `error`, and the session goes on. */
  send(envelope: Pick<SendOptions, 'from' | 'to' | 'size'>, message: SendOptions['message']): Promise<SendResult>;
  quit(): void;
}

/**
 * Opens a session for several messages, as an MTA sending a queue does.
 * Rejects with the refusal when the session cannot start (a 421 greeting, say).
 *
 * @example
 * const session = await openSession({ port });
 * const first = await session.send({ from: 'a@x.test', to: 'b@y.test' }, message);
 * session.quit();
 */
export function openSession(options: ConnectOptions): Promise<SmtpSession> {
  const connection = connectionFor(options);
  let failure: SendResult['error'] | null = null;
  let pending: ((result: Omit<SendResult, 'secure'>) => void) | null = null;
  const secure = () => connection.secureConnection || (connection as unknown as { _socket?: { encrypted?: boolean } })._socket?.encrypted === true;
  const quit = () => {
    connection.quit();
    connection.close();
  };
  return new Promise((resolve, reject) => {
    let open = false;
    connection.on('error', (err: Error) => {
      failure = describe(err);
      if (!open) {
        quit();
        return reject(failure);
      }
      const settle = pending;
      pending = null;
      settle?.({ error: failure });
    });
    connection.connect((err) => {
      if (err) {
        quit();
        return reject(describe(err));
      }
      open = true;
      resolve({
        quit,
        send: (envelope, message) => new Promise((done) => {
          if (failure) return done({ error: failure, secure: secure() });
          const settle = (result: Omit<SendResult, 'secure'>) => done({ ...result, secure: secure() });
          pending = settle;
          connection.send({ from: envelope.from, to: envelope.to, size: envelope.size }, message, (err, info) => {
            if (pending !== settle) return;
            pending = null;
            settle(err ? { error: describe(err) } : { response: info?.response });
          });
        }),
      });
    });
  });
}

function describe(err: Error): NonNullable<SendResult['error']> {
  const e = err as Error & { responseCode?: number; response?: string; command?: string; code?: string };
  return { responseCode: e.responseCode, response: e.response, command: e.command, code: e.code, message: e.message };
}
