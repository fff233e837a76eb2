import { expect, test } from 'vitest';
import { FixedWindow, FixedWindows } from './fixed-window.js';

test('allows `limit` hits per window, then refuses until the next window', () => {
  const w = new FixedWindow();
  const t0 = 120_000;
  expect(w.hit(2, 60_000, t0)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAt: 180_000 });
  expect(w.hit(2, 60_000, t0 + 1).allowed).toBe(true);
  expect(w.hit(2, 60_000, t0 + 59_999)).toEqual({ allowed: false, limit: 2, remaining: 0, resetAt: 180_000 });
  expect(w.hit(2, 60_000, t0 + 60_000)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAt: 240_000 });
});

test('buckets count apart', () => {
  const windows = new FixedWindows(10);
  expect(windows.hit('a', 1, 60_000, 0).allowed).toBe(true);
  expect(windows.hit('a', 1, 60_000, 1).allowed).toBe(false);
  expect(windows.hit('b', 1, 60_000, 2).allowed).toBe(true);
});

test('take counts several hits at once: as many as the window holds pass, the rest are refused uncounted', () => {
  const w = new FixedWindow();
  expect(w.take(5, 60_000, 3, 0)).toEqual({ allowed: true, limit: 5, remaining: 2, resetAt: 60_000, granted: 3 });
  expect(w.take(5, 60_000, 3, 1)).toEqual({ allowed: true, limit: 5, remaining: 0, resetAt: 60_000, granted: 2 });
  expect(w.take(5, 60_000, 3, 2)).toEqual({ allowed: false, limit: 5, remaining: 0, resetAt: 60_000, granted: 0 });
  expect(w.hit(5, 60_000, 3).allowed).toBe(false);
  expect(w.take(5, 60_000, 1, 60_000)).toMatchObject({ allowed: true, remaining: 4, granted: 1 });
});
