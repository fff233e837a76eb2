import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
import { isSealed, seal, SealError, unseal } from './seal.js';

const keyBytes = randomBytes(32);
const key = keyBytes.toString('base64');
const otherKey = randomBytes(32).toString('base64');
const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n';

test('round trip, in the v1.<iv>.<ciphertext> format, with a fresh IV each time', async () => {
  const a = await seal(pem, key);
  const b = await seal(pem, key);
  expect(a).toMatch(/^v1\.[A-Za-z0-9+/]{16}\.[A-Za-z0-9+/]+={0,2}$/);
  expect(a).not.toBe(b);
  expect(a).not.toContain('PRIVATE KEY');
  expect(isSealed(a)).toBe(true);
  expect(await unseal(a, key)).toBe(pem);
  expect(await unseal(b, key)).toBe(pem);
});

test('is AES-256-GCM with a 12-byte IV and the 16-byte tag after the ciphertext', async () => {
  const sealed = await seal('hello', key);
  const [, iv, body] = sealed.split('.');
  const bytes = Buffer.from(body!, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', keyBytes, Buffer.from(iv!, 'base64'));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  expect(Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString()).toBe('hello');

  // And the other way: a value sealed by another AES-GCM implementation opens.
  const nodeIv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyBytes, nodeIv);
  const ct = Buffer.concat([cipher.update('from node'), cipher.final(), cipher.getAuthTag()]);
  expect(await unseal(`v1.${nodeIv.toString('base64')}.${ct.toString('base64')}`, key)).toBe('from node');
});

test('a context is bound: opening needs the same one', async () => {
  const sealed = await seal(pem, key, 'certificates.private_key');
  expect(await unseal(sealed, key, 'certificates.private_key')).toBe(pem);
  await expect(unseal(sealed, key, 'webhooks.secret')).rejects.toBeInstanceOf(SealError);
  await expect(unseal(sealed, key)).rejects.toBeInstanceOf(SealError);
});

test('another key, an altered value or a malformed one is refused', async () => {
  const sealed = await seal(pem, key);
  await expect(unseal(sealed, otherKey)).rejects.toThrow(/cannot be opened/);
  const [v, iv, body] = sealed.split('.');
  const flipped = Buffer.from(body!, 'base64');
  flipped[0]! ^= 1;
  await expect(unseal(`${v}.${iv}.${flipped.toString('base64')}`, key)).rejects.toThrow(/cannot be opened/);
  for (const bad of ['', pem, 'v2.AAAAAAAAAAAAAAAA.AAAA', 'v1.short.AAAA']) {
    await expect(unseal(bad, key)).rejects.toThrow(/not a sealed value/);
  }
});

test('a malformed key is refused', async () => {
  await expect(seal(pem, 'not a key')).rejects.toBeInstanceOf(SealError);
  await expect(seal(pem, '')).rejects.toThrow(/encryption_key/);
});
