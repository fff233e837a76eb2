// The message every target of `pnpm bench inbound` receives: a plain-text
// mail of exactly `size` bytes (headers included, final dot excluded), its
// Message-ID unique per message. No line starts with a dot, so no
// dot-stuffing is needed. With `dkim`, every message carries the same one
// DKIM-Signature field (support/dkim-signature.ts), counted in the size.
import { dkimSignature, type BenchDkimKey } from './dkim-signature.js';

export interface BenchMessage {
  /** The header block and the blank line for message `n`; always the same length. */
  header(n: number): string;
  /** The body, shared by every message; it does not end in CRLF (the terminator adds it). */
  body: Buffer;
}

export function buildMessage(size: number, from: string, to: string, dkim?: Pick<BenchDkimKey, 'domain' | 'selector' | 'privateKey'>): BenchMessage {
  const date = new Date().toUTCString().replace('GMT', '+0000');
  const domain = from.split('@')[1] ?? 'bench.test';
  const unsigned = (n: number) =>
    `From: <${from}>\r\nTo: <${to}>\r\nSubject: inbound bench ${String(n).padStart(9, '0')}\r\n` +
    `Date: ${date}\r\nMessage-ID: <${process.pid}.${String(n).padStart(9, '0')}@${domain}>\r\n` +
    'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n';
  // The terminator's <CRLF>.<CRLF> supplies the body's last line ending.
  const line = 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs\r\n';
  const bodyOf = (wanted: number) => {
    const bytes = Math.max(0, wanted);
    let body = line.repeat(Math.ceil(bytes / line.length) + 1).slice(0, bytes);
    if (body.endsWith('\r')) body = `${body.slice(0, -1)}x`; // never a bare CR before the terminator
    return Buffer.from(body, 'ascii');
  };
  // A signature's length does not depend on what it signs: the first one sizes the body, the second signs it.
  const signatureBytes = dkim ? Buffer.byteLength(dkimSignature(dkim, unsigned(0), bodyOf(size))) : 0;
  const body = bodyOf(size - Buffer.byteLength(unsigned(0)) - signatureBytes - 2);
  const signature = dkim ? dkimSignature(dkim, unsigned(0), body) : '';
  return { header: (n) => signature + unsigned(n), body };
}
