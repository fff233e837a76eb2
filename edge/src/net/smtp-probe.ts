// A small SMTP client that runs in the Worker (TCP from `cloudflare:sockets`)
// and reports each step of a session with a server: connect, greeting, EHLO,
// STARTTLS (confirmed with a NOOP over TLS), EHLO again, AUTH, QUIT. It sends
// no mail. Each step is bounded by the same timeout; the report stops at the
// first step that fails.
import type { SmtpProbeReport, SmtpProbeStep, SmtpSecurity } from '../contracts/smtp-server.js';
import {
  authPlainResponse, base64Utf8, chooseAuthMechanism, ehloCapabilities, ReplyBuffer, replyText,
  type EhloCapabilities, type SmtpReply,
} from './smtp-reply.js';

export interface ProbeTarget {
  /** The server's name: what TLS verifies the certificate against (SNI). */
  host: string;
  /**
   * Where to connect when the host was resolved and checked already (a
   * project's server): connecting by name would let the runtime resolve it
   * again, and a second answer may point elsewhere (DNS rebinding).
   */
  address?: string | null;
  port: number;
  security: SmtpSecurity;
  username: string | null;
  /** The unsealed password; appears in no step's reply or error. */
  password: string | null;
}

export interface ProbeOptions {
  /** The bound of each step, in milliseconds. */
  timeoutMs: number;
  /** The name given in EHLO: the service's public host. */
  ehloName: string;
}

type StepName = SmtpProbeStep['step'];

/** A step that did not pass; `reply` is the server's answer when one came. */
class StepFailure extends Error {
  constructor(message: string, readonly reply?: string) {
    super(message);
    this.name = 'StepFailure';
  }
}

const encoder = new TextEncoder();

/** Rejects with `message` when `work` has not settled within `ms`; a later rejection of `work` is swallowed. */
function within<T>(ms: number, work: Promise<T>, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  work.catch(() => undefined);
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new StepFailure(message)), ms); });
  return Promise.race([work, timeout]).finally(() => { if (timer !== null) clearTimeout(timer); });
}

/** One TCP (later TLS) connection, read a reply at a time. */
class Session {
  private reader!: ReadableStreamDefaultReader<Uint8Array>;
  private writer!: WritableStreamDefaultWriter<Uint8Array>;
  private replies = new ReplyBuffer();
  private decoder = new TextDecoder();
  /** Whether the server has answered since the last command: the session is in step and QUIT may be sent. */
  inStep = false;

  constructor(private socket: Socket) {
    this.attach();
  }

  private attach(): void {
    this.socket.closed.catch(() => undefined);
    this.reader = this.socket.readable.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    this.writer = this.socket.writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
  }

  opened(): Promise<unknown> {
    return this.socket.opened;
  }

  async read(): Promise<SmtpReply> {
    for (;;) {
      const reply = this.replies.take();
      if (reply) {
        this.inStep = true;
        return reply;
      }
      const { value, done } = await this.reader.read();
      if (done) throw new StepFailure('the server closed the connection');
      this.replies.push(this.decoder.decode(value, { stream: true }));
    }
  }

  /** Reads a reply and fails the step unless it has `code`. */
  async expect(code: number): Promise<SmtpReply> {
    const reply = await this.read();
    if (reply.code !== code) throw new StepFailure(`the server answered ${reply.code}, expected ${code}`, replyText(reply));
    return reply;
  }

  async send(line: string): Promise<void> {
    this.inStep = false;
    await this.writer.write(encoder.encode(`${line}\r\n`));
  }

  /**
   * Swaps the plain connection for TLS (after the server's 220 to STARTTLS).
   * Anything the server sent past that 220 is dropped unread: it was not
   * protected by TLS (the STARTTLS injection of CVE-2011-0411).
   */
  startTls(host: string): void {
    this.reader.releaseLock();
    this.writer.releaseLock();
    this.socket = this.socket.startTls({ expectedServerHostname: host });
    this.replies.clear();
    this.decoder = new TextDecoder();
    this.attach();
  }

  async close(): Promise<void> {
    try {
      if (this.inStep) await within(1000, this.send('QUIT'), 'QUIT not sent');
    } catch { /* closing anyway */ }
    try { await this.socket.close(); } catch { /* already closed */ }
  }
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * A TLS session that did not come up. The runtime does not tell the Worker
 * why (its error reads `internal error; reference = …`), so the message names
 * the usual causes.
 */
const tlsFailure = (host: string, e: unknown, reply?: string) => new StepFailure(
  `TLS handshake failed (is the certificate valid for ${host} and issued by a trusted CA?), or the server closed the connection: ${messageOf(e)}`,
  reply,
);

/**
 * Walks an SMTP server through a session and reports every step.
 *
 * @example const report = await probeSmtpServer({ host: 'smtp.example.com', port: 587, security: 'starttls', username: 'u', password: 'p' }, { timeoutMs: 5000, ehloName: 'mail.example.com' });
 */
export async function probeSmtpServer(target: ProbeTarget, opts: ProbeOptions): Promise<SmtpProbeReport> {
  const steps: SmtpProbeStep[] = [];
  const secrets = secretForms(target);
  const redact = (text: string) => secrets.reduce((t, s) => t.split(s).join('[redacted]'), text);
  let session: Session | undefined;

  /** Runs one step within the timeout and records it (with `extra` fields); false when it failed. */
  async function step(name: StepName, work: () => Promise<string | undefined>, timeoutText: string, extra: Partial<SmtpProbeStep> = {}): Promise<boolean> {
    const started = Date.now();
    try {
      const reply = await within(opts.timeoutMs, work(), timeoutText);
      steps.push({ step: name, ok: true, ...extra, ...(reply === undefined ? {} : { reply: redact(reply) }), duration_ms: Date.now() - started });
      return true;
    } catch (e) {
      const reply = e instanceof StepFailure ? e.reply : undefined;
      steps.push({
        step: name, ok: false, ...extra, ...(reply === undefined ? {} : { reply: redact(reply) }),
        error: redact(messageOf(e)), duration_ms: Date.now() - started,
      });
      return false;
    }
  }
  const noReply = `no reply within ${opts.timeoutMs} ms`;
  let caps: EhloCapabilities = { starttls: false, auth: [] };
  const ehlo = () => step('ehlo', async () => {
    await session!.send(`EHLO ${opts.ehloName}`);
    const reply = await session!.expect(250);
    caps = ehloCapabilities(reply);
    return replyText(reply);
  }, noReply);

  const pinned = target.address ?? null;
  const where = pinned ? `${target.host} (${pinned}):${target.port}` : `${target.host}:${target.port}`;
  try {
    const connected = await step('connect', async () => {
      // Imported here so that Node (the CLI, which reads the route declarations) never loads it.
      const { connect } = await import('cloudflare:sockets');
      const implicitTls = target.security === 'tls';
      let socket = connect({ hostname: pinned ? addressLiteral(pinned) : target.host, port: target.port }, {
        // Implicit TLS to a pinned address: upgraded at once with the host's name, since
        // TLS "on" would check the certificate against the address.
        secureTransport: implicitTls ? (pinned ? 'starttls' : 'on') : target.security === 'starttls' ? 'starttls' : 'off',
        allowHalfOpen: false,
      });
      if (implicitTls && pinned) socket = socket.startTls({ expectedServerHostname: target.host });
      session = new Session(socket);
      try {
        await session.opened();
      } catch (e) {
        // With implicit TLS, `opened` waits for the handshake too, and the runtime does not say which failed.
        if (target.security === 'tls') {
          throw new StepFailure(`no TLS connection: nothing answered at ${where}, or the TLS handshake failed (is the certificate valid for ${target.host} and issued by a trusted CA?): ${messageOf(e)}`);
        }
        throw e;
      }
      return undefined;
    }, `not connected within ${opts.timeoutMs} ms`, pinned ? { address: pinned } : {});
    if (!connected) return { ok: false, steps };

    const greeted = await step('greeting', async () => {
      try {
        return replyText(await session!.expect(220));
      } catch (e) {
        // With implicit TLS the handshake happens on this first read.
        if (target.security === 'tls' && !(e instanceof StepFailure)) throw tlsFailure(target.host, e);
        throw e;
      }
    }, `no greeting within ${opts.timeoutMs} ms`);
    if (!greeted) return { ok: false, steps };
    if (!await ehlo()) return { ok: false, steps };

    if (target.security === 'starttls') {
      const upgraded = await step('starttls', async () => {
        if (!caps.starttls) throw new StepFailure('the server does not offer STARTTLS, which security starttls requires (the password is never sent in plain text)');
        await session!.send('STARTTLS');
        const reply = await session!.expect(220);
        session!.startTls(target.host);
        // The handshake happens on the first I/O over TLS (the upgraded socket's
        // `opened` does not wait for it): one NOOP round trip makes it part of this step.
        try {
          await session!.send('NOOP');
          await session!.expect(250);
        } catch (e) {
          if (e instanceof StepFailure && e.reply !== undefined) throw e;
          throw tlsFailure(target.host, e, replyText(reply));
        }
        return replyText(reply);
      }, noReply);
      if (!upgraded || !await ehlo()) return { ok: false, steps };
    }

    if (target.username !== null) {
      const username = target.username;
      const password = target.password ?? '';
      const authed = await step('auth', async () => {
        const mechanism = chooseAuthMechanism(caps.auth);
        if (!mechanism) {
          throw new StepFailure(caps.auth.length
            ? `the server offers AUTH ${caps.auth.join(' ')}, none of which the test speaks (PLAIN, LOGIN)`
            : 'the server does not offer AUTH (some servers offer it only over TLS)');
        }
        if (mechanism === 'PLAIN') {
          await session!.send(`AUTH PLAIN ${authPlainResponse(username, password)}`);
        } else {
          await session!.send('AUTH LOGIN');
          await session!.expect(334);
          await session!.send(base64Utf8(username));
          await session!.expect(334);
          await session!.send(base64Utf8(password));
        }
        return replyText(await session!.expect(235));
      }, noReply);
      if (!authed) return { ok: false, steps };
    }

    const quit = await step('quit', async () => {
      await session!.send('QUIT');
      const reply = await session!.expect(221);
      session!.inStep = false;
      return replyText(reply);
    }, noReply);
    return { ok: quit, steps };
  } finally {
    await session?.close();
  }
}

/** An address as `connect` takes it: IPv6 in brackets. */
function addressLiteral(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/** The password in every form the probe sends it, so that no reply or error can carry it back. */
function secretForms(target: ProbeTarget): string[] {
  const forms: string[] = [];
  if (target.username !== null && target.password !== null) {
    forms.push(authPlainResponse(target.username, target.password), base64Utf8(target.password));
    // Shorter ones would blank out ordinary words of a reply.
    if (target.password.length >= 4) forms.push(target.password);
  }
  return forms.filter((f) => f.length > 0);
}
