// HMAC-SHA-256 keys derived from the installation's encryption key with HKDF,
// one per purpose (`info`), so a token of one kind (a tracked link, an
// unsubscribe link, a bounce address) can never be passed off as another's.
import { encryptionKeyBytes } from '@edgemail/shared';

/** Derived keys by purpose and encryption key: derived once per isolate. */
const keys = new Map<string, Promise<CryptoKey>>();

/**
 * The signing key for `info` under `encryptionKey`.
 * @example const key = await derivedMacKey(config['database.crypto.encryption_key'], 'edgemail tracking token v1');
 */
export function derivedMacKey(encryptionKey: string, info: string): Promise<CryptoKey> {
  const id = `${info}\n${encryptionKey}`;
  let key = keys.get(id);
  if (!key) {
    const bytes = encryptionKeyBytes(encryptionKey);
    if (!bytes) return Promise.reject(new Error('database.crypto.encryption_key is not base64 of 32 bytes'));
    key = crypto.subtle.importKey('raw', bytes, 'HKDF', false, ['deriveKey']).then((master) => crypto.subtle.deriveKey(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: new TextEncoder().encode(info) },
      master, { name: 'HMAC', hash: 'SHA-256', length: 256 }, false, ['sign']));
    keys.set(id, key);
  }
  return key;
}
