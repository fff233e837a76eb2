import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { guardMessage } from './message-guard.js';

const limits = { maxMessageSize: 100, maxHeaderSize: 20 };

async function run(chunks: string[], sizeExceededAfter = Infinity) {
  let seen = 0;
  const source = Readable.from(chunks.map((c) => Buffer.from(c))) as Readable & { sizeExceeded?: boolean };
  source.on('data', (chunk: Buffer) => { seen += chunk.length; source.sizeExceeded = seen > sizeExceededAfter; });
  const out = new PassThrough();
  out.on('error', () => undefined);
  const received: Buffer[] = [];
  out.on('data', (c: Buffer) => received.push(c));
  const outcome = await guardMessage(source, out, limits);
  return { outcome, passed: Buffer.concat(received).toString(), outDestroyed: out.destroyed && !out.writableFinished };
}

describe('guardMessage', () => {
  it('passes a message within the caps through unchanged', async () => {
    const { outcome, passed } = await run(['Subject: a\r\n', '\r\nbody\r\n']);
    expect(outcome).toEqual({ refusal: null, aborted: false });
    expect(passed).toBe('Subject: a\r\n\r\nbody\r\n');
  });

  it('finds the end of the header across chunk boundaries, CRLF or bare LF', async () => {
    expect((await run(['Subject: abcdefg\r', '\n', '\r', '\nlong body '.repeat(5)])).outcome.refusal).toBeNull();
    expect((await run(['Subject: abcdefg\n', '\n', 'long body '.repeat(5)])).outcome.refusal).toBeNull();
    expect((await run(['\r\nno header at all, a long body'])).outcome.refusal).toBeNull();
  });

  it('refuses a header over the cap and destroys the output', async () => {
    const { outcome, outDestroyed } = await run(['Subject: ', 'x'.repeat(30), '\r\n\r\nbody']);
    expect(outcome.refusal?.responseCode).toBe(552);
    expect(outcome.refusal?.message).toMatch(/^5\.3\.4 Message header exceeds/);
    expect(outDestroyed).toBe(true);
  });

  it("refuses a message over the size cap (its own count, or smtp-server's sizeExceeded) and reads on to the end", async () => {
    const own = await run(['Subject: a\r\n\r\n', 'y'.repeat(60), 'y'.repeat(60), 'tail']);
    expect(own.outcome.refusal?.message).toMatch(/^5\.3\.4 Message exceeds the fixed maximum message size of 100 bytes/);
    expect(own.passed.length).toBeLessThanOrEqual(100);
    const flagged = await run(['Subject: a\r\n\r\n', 'y'.repeat(10), 'z'], 20);
    expect(flagged.outcome.refusal?.responseCode).toBe(552);
  });

  it('reports a source that closes before its end as aborted', async () => {
    const source = new PassThrough();
    const out = new PassThrough();
    out.on('error', () => undefined);
    const guarded = guardMessage(source, out, limits);
    source.write('Subject: a\r\n');
    source.destroy();
    expect(await guarded).toEqual({ refusal: null, aborted: true });
    expect(out.destroyed).toBe(true);
  });
});
