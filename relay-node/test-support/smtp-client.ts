// A real SMTP client for listener tests: nodemailer's SMTPConnection, one
// session per call, answering the server's final reply or its refusal.
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

/** Opens a session, sends one message, quits. Never throws for an SMTP refusal. */
export function sendMessage(options: SendOptions): Promise<SendResult> {
  const mode = options.tls ?? 'none';
  const connection = new SMTPConnection({
    host: options.host ?? '127.0.0.1',
    port: options.port,
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

function describe(err: Error): NonNullable<SendResult['error']> {
  const e = err as Error & { responseCode?: number; response?: string; command?: string; code?: string };
  return { responseCode: e.responseCode, response: e.response, command: e.command, code: e.code, message: e.message };
}
