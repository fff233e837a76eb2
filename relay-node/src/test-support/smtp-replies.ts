// Test support: read whole SMTP replies from a raw socket, so tests can speak
// SMTP byte for byte (PROXY lines, bare line endings) where a client library
// would tidy the bytes up.
import type { Socket } from 'node:net';

/**
 * Returns a function resolving to the next whole reply on `socket`; the lines
 * of a multi-line reply are joined with "\n".
 *
 * @example
 * const reply = smtpReplies(socket);
 * expect(await reply()).toMatch(/^220 /);
 */
export function smtpReplies(socket: Socket): () => Promise<string> {
  let buffered = '';
  let current: string[] = [];
  const complete: string[] = [];
  const waiters: ((reply: string) => void)[] = [];
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    buffered += text;
    let end: number;
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      current.push(line);
      if (line[3] === '-') continue;
      const reply = current.join('\n');
      current = [];
      const waiter = waiters.shift();
      if (waiter) waiter(reply);
      else complete.push(reply);
    }
  });
  return () => {
    const reply = complete.shift();
    return reply !== undefined ? Promise.resolve(reply) : new Promise((resolve) => waiters.push(resolve));
  };
}
