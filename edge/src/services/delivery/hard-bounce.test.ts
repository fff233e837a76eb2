import { describe, expect, test } from 'vitest';
import { formatAge, retryDelayMs } from './backoff.js';
import { enhancedCode } from '@edgemail/shared';
import { isHardBounce } from './hard-bounce.js';

describe('isHardBounce', () => {
  test.each([
    [550, '550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown', true],
    [550, '550-5.1.1 The email account that you tried to reach does not exist.\r\n550 5.1.1 https://support.example/?p=NoSuchUser', true],
    [551, '551 5.1.6 user has moved', true],
    [553, '553 5.1.3 bad address syntax', true],
    [550, '550 mailbox unavailable', true],
    [550, '550 Requested action not taken: mailbox unavailable', true],
    [550, '5.1.10 recipient address rejected', true],
    [550, '550 5.7.1 message rejected as spam', false],
    [550, '550 5.2.2 mailbox full', false],
    [553, '553 4.1.8 sender domain does not resolve', false],
    [552, '552 5.1.1 odd but not one of the codes', false],
    [554, '554 5.1.1 not one of the codes', false],
  ])('failed %i %j → %s', (code, reply, hard) => {
    expect(isHardBounce({ outcome: 'failed', smtp_code: code, reply })).toBe(hard);
  });

  test('only failures with a server reply count', () => {
    expect(isHardBounce({ outcome: 'deferred', smtp_code: 550, reply: '550 5.1.1 no such user' })).toBe(false);
    expect(isHardBounce({ outcome: 'failed', smtp_code: null, reply: 'recipient domain nowhere.test does not exist (NXDOMAIN)' })).toBe(false);
  });

  test('enhancedCode reads the code after the reply code, not a number later in the text', () => {
    expect(enhancedCode('550 5.1.1 no such user')).toEqual({ class: 5, subject: 1, detail: 1 });
    expect(enhancedCode('550 no such user (see 5.1.1)')).toBeNull();
    expect(enhancedCode('550 5.1')).toBeNull();
  });
});

describe('backoff', () => {
  test('retry_delay doubles per earlier deferral, at most an hour', () => {
    expect([0, 1, 2, 3].map((n) => retryDelayMs(60_000, n))).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(60_000, 6)).toBe(3_600_000);
    expect(retryDelayMs(60_000, 10_000)).toBe(3_600_000);
  });

  test('ages read as their two largest units', () => {
    expect([0, 45, 200, 3 * 3600 + 720, 2 * 86_400 + 5].map(formatAge)).toEqual(['0s', '45s', '3m 20s', '3h 12m', '2d 0h']);
  });
});
