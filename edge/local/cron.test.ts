import { expect, test } from 'vitest';
import { firesAt, wranglerCrons } from './cron.js';

test('reads the crons of wrangler.toml', () => {
  expect(wranglerCrons()).toEqual(['* * * * *', '17 * * * *']);
});

test('fires every minute, or at the given minute', () => {
  const at = (minute: number) => new Date(Date.UTC(2026, 10, 26, 4, minute));
  expect(firesAt('* * * * *', at(3))).toBe(true);
  expect(firesAt('17 * * * *', at(17))).toBe(true);
  expect(firesAt('17 * * * *', at(18))).toBe(false);
  expect(() => firesAt('*/5 * * * 1', at(0))).toThrow('unsupported expression');
});
