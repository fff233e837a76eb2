import { describe, expect, test } from 'vitest';
import { loadConfig } from '@edgemail/shared';
import { clearedSessionCookie } from './sessions.js';

const cookieFor = (publicUrl: string) => clearedSessionCookie(loadConfig({ SERVICE_SERVER_PUBLIC_URL: publicUrl }).config);

describe('the session cookie', () => {
  test('is HttpOnly, SameSite=Strict, Path=/ and Secure on https', () => {
    expect(cookieFor('https://mail.example.com')).toBe('__Host-edgemail_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure');
  });

  test('leaves Secure off only for plain http on a loopback host (pnpm dev)', () => {
    for (const url of ['http://127.0.0.1:8787', 'http://localhost:8787', 'http://[::1]:8787', 'http://127.5.0.1', 'http://app.localhost']) {
      expect(cookieFor(url), url).not.toMatch(/Secure/);
      expect(cookieFor(url), url).toMatch(/^edgemail_session=; Path=\/;/);
    }
    for (const url of ['http://mail.example.com', 'http://192.0.2.1', 'http://127.0.0.1.example.com', 'https://127.0.0.1']) {
      expect(cookieFor(url), url).toMatch(/^__Host-edgemail_session=; Path=\/; .*; Secure$/);
    }
  });
});
