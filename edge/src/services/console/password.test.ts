import { describe, expect, test } from 'vitest';
import { scrypt } from '@noble/hashes/scrypt';
import { fromBase64 } from '@edgemail/shared';
import { hashPassword, needsRehash, PASSWORD_COST, storedCost, verifyDecoy, verifyPassword } from './password.js';

// A cheap cost for the cases that only need a well-formed hash.
const CHEAP = { N: 1024, r: 8, p: 1 };

describe('console password hashing', () => {
  test('stores scrypt$N$r$p$salt$hash at today\'s cost, a fresh 16-byte salt each time, and verifies', () => {
    const stored = hashPassword('correct horse battery staple');
    const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([^$]+)\$([^$]+)$/.exec(stored)!;
    expect(m).not.toBeNull();
    expect({ N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }).toEqual(PASSWORD_COST);
    expect(fromBase64(m[4]!)).toHaveLength(16);
    expect(fromBase64(m[5]!)).toHaveLength(32);
    expect(verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(verifyPassword('correct horse battery stapl', stored)).toBe(false);
    expect(needsRehash(stored)).toBe(false);
  });

  test('the hash is RFC 7914 scrypt of the NFKC password under the stored salt (not something of our own)', () => {
    const stored = hashPassword('pa\u0301ss', CHEAP); // "á" as a + combining accent
    const [, , , , salt, hash] = stored.split('$');
    const expected = scrypt('p\u00e1ss', fromBase64(salt!), { ...CHEAP, dkLen: 32 });
    expect(fromBase64(hash!)).toEqual(expected);
    expect(verifyPassword('p\u00e1ss', stored)).toBe(true); // the precomposed form is the same password
  });

  test('two hashes of one password differ (per-user salt)', () => {
    expect(hashPassword('same', CHEAP)).not.toBe(hashPassword('same', CHEAP));
  });

  test('the cost is read from the stored string, so older hashes keep verifying and ask to be rehashed', () => {
    const old = hashPassword('pw', CHEAP);
    expect(storedCost(old)).toEqual(CHEAP);
    expect(verifyPassword('pw', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
  });

  test('a malformed or out-of-bounds stored value verifies nothing', () => {
    const good = hashPassword('pw', CHEAP);
    const [, , , , salt, hash] = good.split('$');
    for (const bad of [
      '', 'pw', `argon2id$${salt}$${hash}`,
      `scrypt$1000$8$1$${salt}$${hash}`, // N not a power of two
      `scrypt$${2 ** 21}$8$1$${salt}$${hash}`, // N beyond the bound: would pin the CPU
      `scrypt$1024$0$1$${salt}$${hash}`,
      `scrypt$1024$8$1$${salt}$${hash.slice(0, 20)}`, // truncated hash
    ]) {
      expect(storedCost(bad) === null || bad.endsWith(hash.slice(0, 20))).toBe(true);
      expect(verifyPassword('pw', bad)).toBe(false);
    }
  });

  test('the decoy (unknown email) never matches', () => {
    expect(verifyDecoy('guess nothing')).toBe(false);
  });
});
