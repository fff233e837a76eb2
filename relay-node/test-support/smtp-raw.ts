// A byte-level SMTP client for tests that need what a library client will
// not do: talk before the greeting, pipeline junk, send exact bytes (PROXY
// lines, bare line endings).
import { connect, type Socket } from 'node:net';
import type { X509Certificate } from 'node:crypto';
import { connect as connectTls, type TLSSocket } from 'node:tls';

export interface RawSmtp {
  /** The next complete reply (all lines of a multi-line one, joined by \n). */
  reply(timeoutMs?: number): Promise<string>;
  /** Writes bytes as they are (add CRLF yourself). */
  write(data: string | Buffer): void;
  /** Writes `line` + CRLF and waits for the reply. */
  command(line: string): Promise<string>;
  /** Upgrades the connection (after a `220` to STARTTLS); replies are read from the TLS session after it. */
  startTls(servername?: string): Promise<void>;
  /** After startTls: the certificate the server presented. */
  peerCertificate(): X509Certificate | undefined;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
  close(): void;
}

/** Cuts the bytes a server sends into whole replies and hands them out in order. */
class ReplyReader {
  private buffered = '';
  private current: string[] = [];
  private readonly replies: string[] = [];
  private readonly waiting: ((reply: string) => void)[] = [];

  /** Give it every chunk the server sends. */
  readonly onData = (chunk: Buffer | string) => {
    this.buffered += typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    let end: number;
    while ((end = this.buffered.indexOf('\r\n')) >= 0) {
      const line = this.buffered.slice(0, end);
      this.buffered = this.buffered.slice(end + 2);
      this.current.push(line);
      if (!/^\d{3}(?: |$)/.test(line)) continue; // `250-…`: more lines of this reply follow
      const reply = this.current.join('\n');
      this.current = [];
      const next = this.waiting.shift();
      if (next) next(reply);
      else this.replies.push(reply);
    }
  };

  /** The next whole reply, or a failure after `timeoutMs`. */
  next(timeoutMs = 5000): Promise<string> {
    const ready = this.replies.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise<string>((done, fail) => {
      const take = (reply: string) => {
        clearTimeout(timer);
        done(reply);
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        fail(new Error('no reply in time'));
      }, timeoutMs);
      this.waiting.push(take);
    });
  }
}

/**
 * Connects to `port` on 127.0.0.1 (optionally from `localAddress`). Nothing
 * is read for you: call `reply()` for the greeting.
 */
export function openRaw(port: number, options: { localAddress?: string } = {}): Promise<RawSmtp> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ port, host: '127.0.0.1', localAddress: options.localAddress });
    let writable: Socket = socket;
    let secured: TLSSocket | undefined;
    const replies = new ReplyReader();
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('data', replies.onData);
    socket.once('error', reject);
    socket.once('connect', () => {
      const reply = (timeoutMs?: number) => replies.next(timeoutMs);
      resolve({
        reply,
        write: (data) => writable.write(data),
        command: (line) => {
          writable.write(`${line}\r\n`);
          return reply();
        },
        startTls: (servername) => new Promise<void>((done, fail) => {
          socket.off('data', replies.onData);
          const secure = connectTls({ socket, servername, rejectUnauthorized: false }, () => done());
          secure.once('error', fail);
          secure.on('data', replies.onData);
          writable = secure;
          secured = secure;
        }),
        peerCertificate: () => secured?.getPeerX509Certificate(),
        closed,
        close: () => socket.destroy(),
      });
    });
  });
}

/**
 * The replies on a socket the test connected itself (to a server of its own
 * making): a function resolving to the next whole reply, the lines of a
 * multi-line one joined with "\n".
 *
 * @example
 * const reply = smtpReplies(socket);
 * expect(await reply()).toMatch(/^220 /);
 */
export function smtpReplies(socket: Socket): (timeoutMs?: number) => Promise<string> {
  const replies = new ReplyReader();
  socket.on('data', replies.onData);
  return (timeoutMs) => replies.next(timeoutMs);
}

/**
 * Takes a greeted session to the DATA prompt: EHLO, MAIL FROM and RCPT TO
 * (each answered 250), then DATA (354). Throws naming the first command
 * answered otherwise.
 */
export async function toDataPrompt(raw: RawSmtp, envelope: { from?: string; to?: string } = {}): Promise<void> {
  const steps: [string, RegExp][] = [
    ['EHLO client.test', /^250[ -]/],
    [`MAIL FROM:<${envelope.from ?? 'a@sender.test'}>`, /^250 /],
    [`RCPT TO:<${envelope.to ?? 'b@inbox.test'}>`, /^250 /],
    ['DATA', /^354 /],
  ];
  for (const [command, accepted] of steps) {
    const reply = await raw.command(command);
    if (!accepted.test(reply)) throw new Error(`${command} was answered ${reply}`);
  }
}

/** Opens a session, checks the 220 greeting and takes it to the DATA prompt (see `toDataPrompt`). */
export async function openRawAtData(port: number, envelope: { from?: string; to?: string } = {}): Promise<RawSmtp> {
  const raw = await openRaw(port);
  const greeting = await raw.reply();
  if (!greeting.startsWith('220 ')) throw new Error(`greeted ${greeting}`);
  await toDataPrompt(raw, envelope);
  return raw;
}
