import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { expect, test } from 'vitest';
import { MessageTooLargeError } from './hygiene-errors.js';
import { createSizeLimit } from './size-limit.js';
import { countBytes } from '../../smtp/byte-count.js';

/** Writes chunks of the given sizes and counts what the limit passes on. */
async function run(maxBytes: number, sizes: number[]) {
  const limit = createSizeLimit(maxBytes);
  let kept = 0;
  limit.on('data', (chunk: Buffer) => { kept += chunk.length; });
  const done = new Promise<unknown>((resolve) => {
    limit.on('end', () => resolve(null));
    limit.on('error', resolve);
  });
  let consumed = 0;
  for (const size of sizes) {
    await new Promise<void>((resolve) => limit.write(Buffer.alloc(size, 0x61), () => resolve()));
    consumed += 1;
  }
  limit.end();
  const error = await done;
  return { kept, error, consumed, limit };
}

test('in a pipeline, the error reaches the sink after the source has ended', async () => {
  let sourceEnded = false;
  const source = Readable.from((function* () {
    for (let i = 0; i < 10; i++) yield Buffer.alloc(1000);
    sourceEnded = true;
  })());
  const sink = async (stream: AsyncIterable<Buffer>) => { for await (const _ of stream) { /* drain */ } };
  await expect(pipeline(source, createSizeLimit(2500), sink)).rejects.toBeInstanceOf(MessageTooLargeError);
  expect(sourceEnded).toBe(true);
});

test('under or at the limit, everything passes', async () => {
  expect(await run(100, [40, 60])).toMatchObject({ kept: 100, error: null, consumed: 2 });
  expect(await run(Infinity, [1000, 1000])).toMatchObject({ kept: 2000, error: null });
});

test('one byte over: nothing more is kept, the rest is still read, and the error comes at the end', async () => {
  const { kept, error, consumed, limit } = await run(100, [60, 40, 1, 500, 500]);
  expect(kept).toBe(100);
  expect(consumed).toBe(5);
  expect(error).toBeInstanceOf(MessageTooLargeError);
  expect(error).toMatchObject({ responseCode: 552, enhancedStatus: '5.3.4', maxBytes: 100, bytesSeen: 1101 });
  expect(limit.exceeded).toBe(true);
});

test('a chunk crossing the limit is dropped whole', async () => {
  expect(await run(100, [60, 60, 10])).toMatchObject({ kept: 60, consumed: 3, error: expect.any(MessageTooLargeError) });
});

test('a limit must be a whole number of bytes or Infinity', () => {
  for (const bad of [-1, 1.5, Number.NaN]) expect(() => createSizeLimit(bad)).toThrow(RangeError);
  expect(() => createSizeLimit(0)).not.toThrow();
});

test('countBytes: at the limit fits; from the first byte past it, over for good', () => {
  const size = countBytes(100);
  expect([size.add(60), size.add(40)]).toEqual([true, true]);
  expect(size).toMatchObject({ seen: 100, exceeded: false });
  expect([size.add(1), size.add(0)]).toEqual([false, false]);
  expect(size).toMatchObject({ seen: 101, exceeded: true });
  expect(countBytes(Infinity).add(Number.MAX_SAFE_INTEGER)).toBe(true);
  for (const bad of [-1, 1.5, Number.NaN]) expect(() => countBytes(bad)).toThrow(RangeError);
});
