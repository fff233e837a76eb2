import { expect, test } from 'vitest';
import { assertRecentSignIn, RECENT_SIGN_IN_MS } from './recent-sign-in.js';

test('a sign-in up to 15 minutes old passes; an older one is 403 naming the action', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  expect(() => assertRecentSignIn(new Date(now - RECENT_SIGN_IN_MS), 'add a passkey', now)).not.toThrow();
  expect(() => assertRecentSignIn(new Date(now - RECENT_SIGN_IN_MS - 1), 'add a passkey', now))
    .toThrow('sign in again to add a passkey: this session signed in more than 15 minutes ago');
});
