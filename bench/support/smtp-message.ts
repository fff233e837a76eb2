// The message every target of `pnpm bench inbound` receives: a plain-text
// mail of exactly `size` bytes (headers included, final dot excluded), its
// Message-ID unique per message. No line starts with a dot, so no
// dot-stuffing is needed.

export interface BenchMessage {
  /** The header block and the blank line for message `n`; always the same length. */
  header(n: number): string;
  /** The body, shared by every message; it does not end in CRLF (the terminator adds it). */
  body: Buffer;
}

export function buildMessage(size: number, from: string, to: string): BenchMessage {
  const date = new Date().toUTCString().replace('GMT', '+0000');
  const domain = from.split('@')[1] ?? 'bench.test';
  const header = (n: number) =>
    `From: <${from}>\r\nTo: <${to}>\r\nSubject: inbound bench ${String(n).padStart(9, '0')}\r\n` +
    `Date: ${date}\r\nMessage-ID: <${process.pid}.${String(n).padStart(9, '0')}@${domain}>\r\n` +
    'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n';
  // The terminator's <CRLF>.<CRLF> supplies the body's last line ending.
  const bodyBytes = Math.max(0, size - Buffer.byteLength(header(0)) - 2);
  const line = 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs\r\n';
  let body = line.repeat(Math.ceil(bodyBytes / line.length) + 1).slice(0, bodyBytes);
  if (body.endsWith('\r')) body = `${body.slice(0, -1)}x`; // never a bare CR before the terminator
  return { header, body: Buffer.from(body, 'ascii') };
}
