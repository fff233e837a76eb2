// DKIM private keys parsed once: OpenSSL takes about a millisecond to read a
// PEM RSA key, as long as the rest of a signature. Every job carries its
// domain's key as PEM text (the edge's claim answer), and mailauth 4.13 would
// parse it again for each signature; the parsed KeyObject is kept instead.
import { createPrivateKey, type KeyObject } from 'node:crypto';

/** Keys kept at most: one per from-domain in use, the oldest let go first. */
export const MAX_SIGNING_KEYS = 256;

const parsed = new Map<string, KeyObject>();

/**
 * The key `pem` holds, parsed on first use. Throws what node:crypto throws
 * for text that is not a private key (nothing is kept then).
 *
 * @example const key = signingKey(job.dkim.private_key_pem); // key.asymmetricKeyType === 'rsa'
 */
export function signingKey(pem: string): KeyObject {
  let key = parsed.get(pem);
  if (key) {
    // Most recently used last, so the one let go when full is the least recently used.
    parsed.delete(pem);
    parsed.set(pem, key);
    return key;
  }
  key = createPrivateKey({ key: pem, format: 'pem' });
  if (parsed.size >= MAX_SIGNING_KEYS) parsed.delete(parsed.keys().next().value!);
  parsed.set(pem, key);
  return key;
}
