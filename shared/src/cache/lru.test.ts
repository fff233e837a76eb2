import { expect, test } from 'vitest';
import { LruCache } from './lru.js';

test('evicts the least recently used entry once full, one at a time', () => {
  const cache = new LruCache<string, number>(3);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('c', 3);
  expect(cache.get('a')).toBe(1); // a is now the most recently used
  cache.set('d', 4);
  expect(cache.get('b')).toBeUndefined();
  expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
  expect(cache.size).toBe(3);
});

test('overwriting a key neither grows the cache nor evicts another', () => {
  const cache = new LruCache<string, number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  cache.set('a', 10);
  expect([cache.size, cache.get('a'), cache.get('b')]).toEqual([2, 10, 2]);
});

test('refuses a capacity below 1', () => {
  expect(() => new LruCache(0)).toThrow(RangeError);
});
