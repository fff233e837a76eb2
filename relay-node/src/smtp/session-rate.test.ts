import { describe, expect, it } from 'vitest';
import { createSessionRate } from './session-rate.js';

describe('createSessionRate', () => {
  const minute = 60_000;
  const start = 10 * minute; // aligned to a window

  it('admits perMinute sessions per address per fixed minute, then refuses until the next window', () => {
    const rate = createSessionRate(2);
    expect([rate.admit('192.0.2.1', start), rate.admit('192.0.2.1', start + 1), rate.admit('192.0.2.1', start + 2)]).toEqual([true, true, false]);
    expect(rate.admit('192.0.2.2', start + 3)).toBe(true);
    expect(rate.admit('192.0.2.1', start + minute)).toBe(true);
  });

  it('counts IPv6 clients by /64 and IPv4-mapped addresses as IPv4', () => {
    const rate = createSessionRate(1);
    expect(rate.admit('2001:db8:1:2::1', start)).toBe(true);
    expect(rate.admit('2001:db8:1:2:ffff::9', start)).toBe(false);
    expect(rate.admit('2001:db8:1:3::1', start)).toBe(true);
    expect(rate.admit('198.51.100.7', start)).toBe(true);
    expect(rate.admit('::ffff:198.51.100.7', start)).toBe(false);
  });

  it('admits everything when the setting is 0', () => {
    const rate = createSessionRate(0);
    for (let i = 0; i < 1000; i++) expect(rate.admit('192.0.2.1', start)).toBe(true);
  });
});
