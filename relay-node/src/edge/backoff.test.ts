import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, sleep } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles from 1 s and is capped at 5 min, jittered between half the ceiling and the ceiling', () => {
    const low = (attempt: number) => backoffDelay(attempt, { random: () => 0 });
    const high = (attempt: number) => backoffDelay(attempt, { random: () => 0.999999 });
    expect([0, 1, 2, 3].map(high)).toEqual([1000, 2000, 4000, 8000]);
    expect([0, 1, 2, 3].map(low)).toEqual([500, 1000, 2000, 4000]);
    expect(high(8)).toBe(256_000);
    expect(high(9)).toBe(300_000);
    expect(high(500)).toBe(300_000);
    expect(low(500)).toBe(150_000);
  });

  it('spreads nodes that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(4)));
    expect(delays.size).toBeGreaterThan(10);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(8000), expect(d).toBeLessThanOrEqual(16_000);
  });
});

describe('Backoff', () => {
  it('counts attempts and starts over after reset', () => {
    const backoff = new Backoff({ random: () => 0.999999 });
    expect([backoff.next(), backoff.next(), backoff.next()]).toEqual([1000, 2000, 4000]);
    backoff.reset();
    expect(backoff.next()).toBe(1000);
  });
});

describe('sleep', () => {
  it('ends early, with false, when its signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const waiting = sleep(60_000, controller.signal);
    setTimeout(() => controller.abort(), 20);
    expect(await waiting).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await sleep(5)).toBe(true);
  });
});
