// A byte-level SMTP client for tests that need what a library client will
// not do: talk before the greeting, pipeline junk, send exact bytes.
import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

export interface RawSmtp {
  /** The next complete reply (all lines of a multi-line one, joined by \n). */
  reply(timeoutMs?: number): Promise<string>;
  /** Writes bytes as they are (add CRLF yourself). */
  write(data: string | Buffer): void;
  /** Writes `line` + CRLF and waits for the reply. */
  command(line: string): Promise<string>;
  /** Upgrades the connection (after a `220` to STARTTLS); replies are read from the TLS session after it. */
  startTls(servername?: string): Promise<void>;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
  close(): void;
}

/**
 * Connects to `port` on 127.0.0.1 (optionally from `localAddress`). Nothing
 * is read for you: call `reply()` for the greeting.
 */
export function openRaw(port: number, options: { localAddress?: string } = {}): Promise<RawSmtp> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ port, host: '127.0.0.1', localAddress: options.localAddress });
    let writable: Socket = socket;
    let buffered = '';
    const replies: string[] = [];
    const waiting: ((reply: string) => void)[] = [];
    let current: string[] = [];
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        current.push(line);
        if (/^\d{3}(?: |$)/.test(line)) {
          const reply = current.join('\n');
          current = [];
          const next = waiting.shift();
          if (next) next(reply);
          else replies.push(reply);
        }
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('connect', () => {
      const reply = (timeoutMs = 5000) => {
        const ready = replies.shift();
        if (ready !== undefined) return Promise.resolve(ready);
        return new Promise<string>((done, fail) => {
          const take = (r: string) => {
            clearTimeout(timer);
            done(r);
          };
          const timer = setTimeout(() => {
            waiting.splice(waiting.indexOf(take), 1);
            fail(new Error('no reply in time'));
          }, timeoutMs);
          waiting.push(take);
        });
      };
      resolve({
        reply,
        write: (data) => writable.write(data),
        command: (line) => {
          writable.write(`${line}\r\n`);
          return reply();
        },
        startTls: (servername) => new Promise<void>((done, fail) => {
          socket.off('data', onData);
          const secure = connectTls({ socket, servername, rejectUnauthorized: false }, () => done());
          secure.once('error', fail);
          secure.on('data', onData);
          writable = secure;
        }),
        closed,
        close: () => socket.destroy(),
      });
    });
  });
}
