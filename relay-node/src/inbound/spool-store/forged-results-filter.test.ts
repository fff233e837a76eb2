import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { authservIdOf, dropForgedAuthResults } from './forged-results-filter.js';

/** The filter's output for `message` fed in chunks of `size` bytes. */
const filtered = (message: string, size: number) => {
  const chunks: Buffer[] = [];
  for (let i = 0; i < message.length; i += size) chunks.push(Buffer.from(message.slice(i, i + size), 'latin1'));
  return text(Readable.from(chunks).pipe(dropForgedAuthResults('mx.edge.test')));
};

describe('dropForgedAuthResults', () => {
  it('removes every field claiming our authserv-id, however it is spelt or cut into chunks, and nothing else', async () => {
    const message = [
      'Received: from a',
      'Authentication-Results: mx.edge.test; dkim=pass',
      'Authentication-Results: (comment (nested)) MX.EDGE.TEST.',
      '  1; spf=pass',
      'authentication-results : "mx.edge.test"; dmarc=pass',
      'Authentication-Results: mx.edge.test.evil.example; dkim=pass',
      'X-Authentication-Results: mx.edge.test; dkim=pass',
      'From: a@b.test',
      '',
      'Authentication-Results: mx.edge.test; in the body, untouched',
      '',
    ].join('\r\n');
    const expected = [
      'Received: from a',
      'Authentication-Results: mx.edge.test.evil.example; dkim=pass',
      'X-Authentication-Results: mx.edge.test; dkim=pass',
      'From: a@b.test',
      '',
      'Authentication-Results: mx.edge.test; in the body, untouched',
      '',
    ].join('\r\n');
    for (const size of [1, 2, 3, 5, 64, message.length]) expect(await filtered(message, size)).toBe(expected);
  });

  it('reads a header block that ends the message, and LF line endings', async () => {
    expect(await filtered('Authentication-Results: mx.edge.test; x=y\r\nFrom: a@b.test\r\n', 4)).toBe('From: a@b.test\r\n');
    expect(await filtered('Authentication-Results: mx.edge.test; x=y\nFrom: a\n\nbody\n', 3)).toBe('From: a\n\nbody\n');
  });

  it('reads a message that starts with a blank line as having no header: its body passes untouched', async () => {
    const message = '\r\nAuthentication-Results: mx.edge.test; dkim=pass\r\nFrom: a@b.test\r\n\r\nmore\r\n';
    for (const size of [1, 2, 7, message.length]) expect(await filtered(message, size)).toBe(message);
    expect(await filtered('\nAuthentication-Results: mx.edge.test; dkim=pass\n', 3)).toBe('\nAuthentication-Results: mx.edge.test; dkim=pass\n');
  });

  it('passes 8 MiB of header-less body through unchanged, fed a chunk at a time', async () => {
    const line = 'Authentication-Results: mx.edge.test; dkim=pass\r\n';
    const message = '\r\n' + line.repeat(Math.ceil(8 * 1_048_576 / line.length));
    const out = await filtered(message, 16_384);
    expect(out.length).toBe(message.length);
    expect(out === message).toBe(true);
  });

  it('stops holding past max_header_size without a blank line, and lets every byte through unchanged', async () => {
    const header = 'Authentication-Results: mx.edge.test; dkim=pass\r\n'.repeat(100); // ~5 KB, no blank line
    const chunks: Buffer[] = [];
    for (let i = 0; i < header.length; i += 100) chunks.push(Buffer.from(header.slice(i, i + 100), 'latin1'));
    expect(await text(Readable.from(chunks).pipe(dropForgedAuthResults('mx.edge.test', 1024)))).toBe(header);
    // Within the limit it is still a header, filtered.
    expect(await text(Readable.from(chunks).pipe(dropForgedAuthResults('mx.edge.test', 10_000)))).toBe('');
  });

  it('takes the authserv-id as RFC 8601 section 2.2 writes it', () => {
    expect(authservIdOf(' mx.edge.test; spf=pass')).toBe('mx.edge.test');
    expect(authservIdOf(' (a (b) c) "mx.edge.test" 1; none')).toBe('mx.edge.test');
    expect(authservIdOf(' mx.edge.test.\r\n 1; none')).toBe('mx.edge.test');
    expect(authservIdOf(' ; none')).toBe('');
  });
});
