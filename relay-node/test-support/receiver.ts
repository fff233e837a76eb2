// Test-only: a receiving SMTP server on loopback that records what arrived
// (envelope, bytes, TLS, AUTH user), with hooks to answer 4xx/5xx; a server
// that accepts connections and never speaks; a port nobody listens on.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { CertificatePair } from './self-signed.js';

export interface ReceivedMessage {
  mailFrom: string;
  rcptTo: string[];
  bytes: Buffer;
  /** The session ran over TLS (STARTTLS or implicit). */
  secure: boolean;
  /** The AUTH user, when the client logged in. */
  user: string | null;
  helo: string;
  /** The address the client connected to (which "host" took it). */
  localAddress: string;
}

/** One SMTP session as the receiver saw it. */
export interface ReceivedSession {
  /** The commands the client sent, by name, in order (`EHLO`, `MAIL`, …, `QUIT`). */
  commands: string[];
  /** The argument of the client's last EHLO/HELO. */
  helo: string;
  /** The connection has ended (by either side). */
  closed: boolean;
}

export interface ReceiverOptions {
  /** Address to bind: any 127.x.y.z (tests give MX hosts different ones). Default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks one. */
  port?: number;
  /** STARTTLS offered (self-signed certificate for mx.test names). Default true. */
  starttls?: boolean;
  /** TLS from the first byte. */
  implicitTls?: boolean;
  /** Require AUTH with this user and password (offered only after STARTTLS unless `implicitTls` or `insecureAuth`). */
  auth?: { user: string; pass: string };
  /** Allow AUTH in plain text. */
  insecureAuth?: boolean;
  /** Answer RCPT TO with this error (`451 4.2.0 …`): code and text; a function decides per recipient (null accepts). */
  rcptReply?: { code: number; text: string } | ((to: string) => { code: number; text: string } | null);
  /** Answer the end of DATA with this error. */
  dataReply?: { code: number; text: string };
  /** Called when DATA ends, before the reply: tests hold the reply with it. */
  beforeDataReply?: (message: ReceivedMessage) => Promise<void> | void;
  /** Reply text for an accepted message. Default `queued as <n>`. */
  okText?: (n: number) => string;
}

export interface Receiver {
  readonly host: string;
  readonly port: number;
  readonly messages: ReceivedMessage[];
  /** Sessions opened so far. */
  readonly connections: number;
  /** Every session opened so far, in order. */
  readonly sessions: ReceivedSession[];
  close(): Promise<void>;
}

let sharedCertificate: CertificatePair | null = null;
/**
 * One self-signed certificate for all receivers of a test file (openssl is
 * slow-ish), for `localhost`, `*.dest.test` and the IP 127.0.0.1, so a client
 * that trusts it (`extraCa`) can verify a server reached as `127.0.0.1`.
 */
export function testCertificate(): CertificatePair {
  if (sharedCertificate) return sharedCertificate;
  const dir = mkdtempSync(join(tmpdir(), 'edgemail-outbound-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,DNS:*.dest.test,IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    sharedCertificate = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
    return sharedCertificate;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function replyError(reply: { code: number; text: string }): Error {
  return Object.assign(new Error(reply.text), { responseCode: reply.code });
}

/** @example const rx = await startReceiver({ starttls: false }); … rx.messages[0].bytes */
export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const host = options.host ?? '127.0.0.1';
  const messages: ReceivedMessage[] = [];
  let connections = 0;
  const sessions = new Map<string, ReceivedSession>();
  const tls = options.starttls !== false || options.implicitTls ? testCertificate() : null;
  const settings: SMTPServerOptions = {
    // smtp-server has no hook per command; its debug log names each one with the session's id.
    logger: commandRecorder(sessions),
    disableReverseLookup: true,
    secure: !!options.implicitTls,
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    disabledCommands: [...(options.starttls === false && !options.implicitTls ? ['STARTTLS'] : []), ...(options.auth ? [] : ['AUTH'])],
    authOptional: !options.auth,
    allowInsecureAuth: !!options.insecureAuth,
    onConnect(session, callback) {
      connections++;
      sessions.set(session.id, { commands: [], helo: '', closed: false });
      callback();
    },
    onClose(session) {
      const seen = sessions.get(session.id);
      if (seen) seen.closed = true;
    },
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('5.7.8 authentication failed'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const reply = typeof options.rcptReply === 'function' ? options.rcptReply(address.address) : options.rcptReply;
      callback(reply ? replyError(reply) : undefined);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const message: ReceivedMessage = {
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          bytes: Buffer.concat(chunks),
          secure: session.secure,
          user: (session.user as string | undefined) ?? null,
          helo: session.hostNameAppearsAs,
          localAddress: session.localAddress,
        };
        await options.beforeDataReply?.(message);
        if (options.dataReply) return callback(replyError(options.dataReply));
        messages.push(message);
        callback(null, options.okText?.(messages.length) ?? `2.0.0 queued as ${messages.length}`);
      });
    },
  };
  const server = new SMTPServer(settings);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  server.on('error', () => undefined);
  const port = (server.server.address() as AddressInfo).port;
  return {
    host,
    port,
    messages,
    get connections() {
      return connections;
    },
    get sessions() {
      return [...sessions.values()];
    },
    close: () => new Promise<void>((resolve) => {
      for (const connection of (server as unknown as { connections: Set<{ close(): void }> }).connections) connection.close();
      server.close(() => resolve());
    }),
  };
}

/** A bunyan-style logger that notes each command smtp-server logs (`C: EHLO relay.test`) in its session. */
function commandRecorder(sessions: Map<string, ReceivedSession>): SMTPServerOptions['logger'] {
  const ignore = () => undefined;
  const debug = (entry: unknown, ...text: unknown[]) => {
    const { tnx, cid, command } = (entry ?? {}) as { tnx?: string; cid?: string; command?: string };
    const session = tnx === 'command' && cid ? sessions.get(cid) : undefined;
    if (!session || !command) return;
    session.commands.push(command);
    const line = text.map(String).join(' ');
    const helo = /^C:\s+(?:EHLO|HELO)\s+(\S+)/i.exec(line);
    if (helo) session.helo = helo[1]!;
  };
  return { trace: ignore, debug, info: ignore, warn: ignore, error: ignore, fatal: ignore } as unknown as SMTPServerOptions['logger'];
}

/** A TCP server that accepts and never says a word (no greeting). */
export async function startSilentServer(host = '127.0.0.1', port = 0): Promise<{ port: number; sockets: Socket[]; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    sockets,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
