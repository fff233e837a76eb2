import { expect, test } from 'vitest';
import { encryptionKeyBytes } from './encryption-key.js';

// No node:* here: shared code (and its tests) runs on Workers too.
const base64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const filled = (n: number) => new Uint8Array(n).fill(1);
const bytes = Uint8Array.from({ length: 32 }, (_, i) => i * 7);
const standard = base64(bytes);
const urlSafe = standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

test('reads base64 of 32 bytes, standard or URL-safe, padded or not', () => {
  expect(standard).toHaveLength(44);
  for (const text of [standard, standard.replace(/=$/, ''), urlSafe, ` ${standard}\n`]) {
    expect(encryptionKeyBytes(text)).toEqual(bytes);
  }
});

test.each([
  ['empty', ''],
  ['31 bytes', base64(filled(31))],
  ['33 bytes', base64(filled(33))],
  ['hex of 32 bytes', '01'.repeat(32)],
  ['not base64', '!'.repeat(43) + '='],
])('refuses %s', (_, text) => {
  expect(encryptionKeyBytes(text)).toBeNull();
});

test('the setting refuses a malformed key with a ConfigError naming it, never echoing the value', async () => {
  const { ConfigError, loadConfig } = await import('../config/load.js');
  const secret = 'not-a-key-but-a-secret-all-the-same';
  let error: unknown;
  try { loadConfig({ SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: secret }); } catch (e) { error = e; }
  expect(error).toBeInstanceOf(ConfigError);
  const message = (error as Error).message;
  expect(message).toContain('database.crypto.encryption_key');
  expect(message).toContain('SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY');
  expect(message).not.toContain(secret);
  // Unset is allowed by the schema (only the edge needs a key, and says so itself); a good key loads.
  expect(loadConfig({}).config['database.crypto.encryption_key']).toBe('');
  expect(loadConfig({ SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: standard }).config['database.crypto.encryption_key']).toBe(standard);
});
