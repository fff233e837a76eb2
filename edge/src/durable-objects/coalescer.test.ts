import { expect, test } from 'vitest';
import { Coalescer } from './coalescer.js';

test('items added while a flush runs go together in the next one; an idle add flushes at once', async () => {
  const batches: number[][] = [];
  let release!: () => void;
  const coalescer = new Coalescer<number>(async (items) => {
    batches.push(items);
    if (batches.length === 1) await new Promise<void>((r) => { release = r; });
  });
  const first = coalescer.add([1]);
  const second = coalescer.add([2]);
  const third = coalescer.add([3, 4]);
  await Promise.resolve();
  expect(batches).toEqual([[1]]);
  release();
  await Promise.all([first, second, third]);
  expect(batches).toEqual([[1], [2, 3, 4]]);
  await coalescer.add([5]);
  expect(batches).toEqual([[1], [2, 3, 4], [5]]);
});

test('a failed flush rejects the adds of its batch only', async () => {
  const coalescer = new Coalescer<number>(async (items) => { if (items.includes(0)) throw new Error('boom'); });
  await expect(coalescer.add([0])).rejects.toThrow('boom');
  await expect(coalescer.add([1])).resolves.toBeUndefined();
});
