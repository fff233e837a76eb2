import { describe, expect, test } from 'vitest';
import { createAuthFailures } from './auth-failures.js';

describe('createAuthFailures', () => {
  test('the failure past the limit shuts the address out until its window ends; others are untouched', () => {
    const failures = createAuthFailures(3, 60_000);
    const t = 120_000;
    expect([1, 2, 3].map(() => failures.fail('198.51.100.7', t))).toEqual([false, false, false]);
    expect(failures.blocked('198.51.100.7', t)).toBe(false);
    expect(failures.fail('198.51.100.7', t + 1)).toBe(true);
    expect(failures.blocked('198.51.100.7', t + 2)).toBe(true);
    expect(failures.blocked('198.51.100.8', t + 2)).toBe(false);
    expect(failures.blocked('198.51.100.7', t + 60_000)).toBe(false);
  });

  test('IPv6 addresses count per /64; 0 disables', () => {
    const failures = createAuthFailures(1, 60_000);
    failures.fail('2001:db8:1:2::1', 0);
    expect(failures.fail('2001:db8:1:2::ffff', 1)).toBe(true);
    expect(failures.blocked('2001:db8:1:2:aaaa::1', 2)).toBe(true);
    const off = createAuthFailures(0, 60_000);
    for (let i = 0; i < 100; i++) expect(off.fail('198.51.100.7')).toBe(false);
  });
});
