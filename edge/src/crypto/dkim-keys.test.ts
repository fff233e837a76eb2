import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { dkimSelector, dkimTxtValue, generateDkimKeyPair, isDkimAlgorithm } from './dkim-keys.js';

// The fixed SPKI prefix of an Ed25519 public key (RFC 8410): SEQUENCE { SEQUENCE { OID 1.3.101.112 }, BIT STRING }.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const message = Buffer.from('DKIM-Signature: v=1; a=rsa-sha256; d=acme.test; s=em202611');

describe('generateDkimKeyPair', () => {
  test('rsa: 2048-bit PKCS#8 PEM whose signatures verify under the published SPKI p= value', async () => {
    const pair = await generateDkimKeyPair('rsa');
    expect(pair.algorithm).toBe('rsa');
    expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END PRIVATE KEY-----\n$/);
    const privateKey = createPrivateKey(pair.privateKeyPem);
    expect(privateKey.asymmetricKeyType).toBe('rsa');
    expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const publicKey = createPublicKey({ key: Buffer.from(pair.publicKey, 'base64'), format: 'der', type: 'spki' });
    const signature = sign('sha256', message, privateKey);
    expect(verify('sha256', message, publicKey, signature)).toBe(true);
    expect(verify('sha256', Buffer.from('altered'), publicKey, signature)).toBe(false);
  });

  test('the default is rsa', async () => {
    expect((await generateDkimKeyPair()).algorithm).toBe('rsa');
  });

  test('ed25519: p= is the raw 32-byte key (RFC 8463), matching the private key', async () => {
    const pair = await generateDkimKeyPair('ed25519');
    const raw = Buffer.from(pair.publicKey, 'base64');
    expect(raw).toHaveLength(32);
    const privateKey = createPrivateKey(pair.privateKeyPem);
    expect(privateKey.asymmetricKeyType).toBe('ed25519');
    const publicKey = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    expect(createPublicKey(privateKey).export({ format: 'der', type: 'spki' })).toEqual(Buffer.concat([ED25519_SPKI_PREFIX, raw]));
    const signature = sign(null, message, privateKey);
    expect(verify(null, message, publicKey, signature)).toBe(true);
  });

  test('every pair is new', async () => {
    const [a, b] = await Promise.all([generateDkimKeyPair('ed25519'), generateDkimKeyPair('ed25519')]);
    expect(a.publicKey).not.toBe(b.publicKey);
  });
});

test('dkimSelector: em + UTC year and month', () => {
  expect(dkimSelector(new Date('2026-11-25T12:00:00Z'))).toBe('em202611');
  expect(dkimSelector(new Date('2027-01-01T00:30:00+01:00'))).toBe('em202612');
  expect(dkimSelector()).toMatch(/^em\d{6}$/);
});

test('dkimTxtValue and isDkimAlgorithm', () => {
  expect(dkimTxtValue('ed25519', 'abc=')).toBe('v=DKIM1; k=ed25519; p=abc=');
  expect(['rsa', 'ed25519', 'dsa', 'RSA', 1].map(isDkimAlgorithm)).toEqual([true, true, false, false, false]);
});
