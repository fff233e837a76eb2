import { describe, expect, test } from 'vitest';
import { bounceDomain, verpAddress, verpEmailId } from './verp.js';

const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const settings = { 'server.public_url': 'https://Mail.Example.com:8443/app', 'database.crypto.encryption_key': key(1) };
const emailId = '0f8e6c1a-2b3c-4d5e-8f70-8192a3b4c5d6';

describe('bounceDomain', () => {
  test.each([
    ['https://Mail.Example.com:8443/app', 'bounces.mail.example.com'],
    ['http://127.0.0.1:8787', null],
    ['http://[::1]:8787', null],
    ['http://localhost:8787', null],
  ])('%s → %s', (url, domain) => {
    expect(bounceDomain({ 'server.public_url': url })).toBe(domain);
  });
});

describe('verpAddress / verpEmailId', () => {
  test('the return path names the email, and verifies in any case', async () => {
    const address = (await verpAddress(settings, emailId))!;
    expect(address).toMatch(/^bounce-0f8e6c1a2b3c4d5e8f708192a3b4c5d6-[0-9a-f]{20}@bounces\.mail\.example\.com$/);
    expect(await verpEmailId(settings, address)).toEqual({ ok: true, emailId });
    expect(await verpEmailId(settings, address.toUpperCase())).toEqual({ ok: true, emailId });
  });

  test('another key, another email\'s MAC, another domain or another form are refused', async () => {
    const address = (await verpAddress(settings, emailId))!;
    const mac = /-([0-9a-f]{20})@/.exec(address)![1]!;
    expect(await verpEmailId({ ...settings, 'database.crypto.encryption_key': key(2) }, address)).toEqual({ ok: false, problem: 'bad MAC' });
    expect(await verpEmailId(settings, `bounce-${'1'.repeat(32)}-${mac}@bounces.mail.example.com`)).toEqual({ ok: false, problem: 'bad MAC' });
    expect((await verpEmailId(settings, address.replace('bounces.mail.example.com', 'bounces.evil.test'))).ok).toBe(false);
    expect(await verpEmailId(settings, 'postmaster@bounces.mail.example.com')).toEqual({ ok: false, problem: 'not a return path (bounce-<email id>-<mac>)' });
  });

  test('no bounce domain: no return path', async () => {
    expect(await verpAddress({ ...settings, 'server.public_url': 'http://127.0.0.1:8787' }, emailId)).toBeNull();
  });
});
