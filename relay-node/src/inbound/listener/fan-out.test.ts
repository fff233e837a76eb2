import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fanOut } from './fan-out.js';

const collect = async (stream: PassThrough) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

describe('fanOut', () => {
  it('gives every branch every byte, at the pace of the slowest', async () => {
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(16 * 1024, 97 + (i % 26)));
    const big = Buffer.concat(chunks).toString();
    const [a, b] = fanOut(Readable.from(chunks), 2) as [PassThrough, PassThrough];
    const fast = collect(a);
    // b is not read for a while: the source must wait instead of buffering the whole message in b.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(b.readableLength + b.writableLength).toBeLessThan(128 * 1024);
    const [ra, rb] = await Promise.all([fast, collect(b)]);
    expect(ra).toBe(big);
    expect(rb).toBe(big);
  });

  it('skips a branch its reader destroyed, and errors every branch when the source errors', async () => {
    const source = new PassThrough();
    const [a, b] = fanOut(source, 2) as [PassThrough, PassThrough];
    b.destroy();
    source.end('y'.repeat(200_000));
    expect(await collect(a)).toHaveLength(200_000);

    const failing = new PassThrough();
    const [c] = fanOut(failing, 1) as [PassThrough];
    failing.destroy(new Error('client gone'));
    await expect(collect(c)).rejects.toThrow('client gone');
  });
});
