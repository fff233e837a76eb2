// Console passwords: scrypt (RFC 7914) with a per-user random salt, stored as
// `scrypt$<N>$<r>$<p>$<base64 salt>$<base64 hash>` so the cost can be raised
// later: verifying reads the cost from the stored string, and `needsRehash`
// tells a sign-in to store a new hash at today's cost.
//
// Pure JS (@noble/hashes): the Worker runs without nodejs_compat (no
// node:crypto scrypt) and may not compile WASM at run time. The cost is
// measured by `pnpm bench console` and documented in docs/console.md.
import { scrypt } from '@noble/hashes/scrypt';
import { fromBase64, toBase64 } from '@edgemail/shared';

export interface ScryptCost { N: number; r: number; p: number }

/**
 * Today's cost: N=2^15, r=8 (32 MiB of memory per hash), p=1. OWASP's first
 * choice, N=2^17 (128 MiB), is a Worker isolate's whole memory; its
 * equivalents trade memory for CPU, and CPU here blocks the isolate: a hash is
 * synchronous (pure JS), so every other request the isolate holds waits for
 * it. 32 MiB is the most memory that leaves room, at a CPU cost measured by
 * `pnpm bench console` (docs/console.md).
 */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 1 };

const SALT_BYTES = 16;
const HASH_BYTES = 32;
const STORED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;
// Bounds on a stored cost: a corrupt or hostile row must not pin the CPU or exhaust memory.
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 64;

function derive(password: string, salt: Uint8Array, cost: ScryptCost): Uint8Array {
  return scrypt(password.normalize('NFKC'), salt, { ...cost, dkLen: HASH_BYTES });
}

/** A new stored hash of `password` at `cost` (today's by default), with a fresh salt. */
export function hashPassword(password: string, cost: ScryptCost = PASSWORD_COST): string {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${toBase64(salt)}$${toBase64(derive(password, salt, cost))}`;
}

/** The cost a stored hash was made with; null when the string is not one of ours or out of bounds. */
export function storedCost(stored: string): ScryptCost | null {
  const m = STORED.exec(stored);
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const powerOfTwo = N >= 2 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return null;
  return { N, r, p };
}

/** Whether `password` matches the stored hash (false for a malformed one); compared in constant time. */
export function verifyPassword(password: string, stored: string): boolean {
  const cost = storedCost(stored);
  if (!cost) return false;
  const m = STORED.exec(stored)!;
  const expected = fromBase64(m[5]!);
  const actual = derive(password, fromBase64(m[4]!), cost);
  if (expected.length !== actual.length) return false;
  let diff = 0;
  for (let i = 0; i < actual.length; i++) diff |= actual[i]! ^ expected[i]!;
  return diff === 0;
}

/** Whether a stored hash was made below today's cost (rehash it on the next good sign-in). */
export function needsRehash(stored: string): boolean {
  const cost = storedCost(stored);
  return !cost || cost.N < PASSWORD_COST.N || cost.r < PASSWORD_COST.r || cost.p < PASSWORD_COST.p;
}

// Verified when the email is unknown or has no password, so those answers take
// as long as a wrong password does. Its "hash" is fixed bytes that no password
// is known to produce.
const DECOY = `scrypt$${PASSWORD_COST.N}$${PASSWORD_COST.r}$${PASSWORD_COST.p}$3q2+7wAAAAAAAAAAAAAAAA==$Z3Vlc3Mgbm90aGluZzogcmFuZG9tIGJ5dGVzIGhlcmU=`;

/** Spends a verify's CPU without a user (unknown email): the answer's timing reveals nothing. */
export function verifyDecoy(password: string): false {
  verifyPassword(password, DECOY);
  return false;
}
