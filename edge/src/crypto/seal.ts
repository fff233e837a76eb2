// Sealing secrets the service must read back (private keys, webhook secrets,
// SMTP passwords): AES-256-GCM under `database.crypto.encryption_key`, via
// WebCrypto, so the Worker and the Node tools open the same values.
//
// Format: `v1.<base64 iv>.<base64 ciphertext with its 16-byte tag>`, a fresh
// 12-byte IV per value. An optional context string is bound as additional
// data, so a value sealed for one column cannot be passed off as another's.
import { encryptionKeyBytes, fromBase64, toBase64 } from '@edgemail/shared';

const VERSION = 'v1';
const IV_BYTES = 12;
const SEALED = /^v1\.([A-Za-z0-9+/]{16})\.([A-Za-z0-9+/]+={0,2})$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** A value that cannot be opened: malformed, sealed under another key or context, or altered. */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

// Imported once per key text and isolate.
const imported = new Map<string, Promise<CryptoKey>>();

function aesKey(keyText: string): Promise<CryptoKey> {
  let key = imported.get(keyText);
  if (!key) {
    const bytes = encryptionKeyBytes(keyText);
    if (!bytes) throw new SealError('database.crypto.encryption_key is not base64 of 32 bytes');
    key = crypto.subtle.importKey('raw', bytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
    imported.set(keyText, key);
  }
  return key;
}

const params = (iv: Uint8Array, context: string) =>
  context ? { name: 'AES-GCM', iv, additionalData: encoder.encode(context) } : { name: 'AES-GCM', iv };

/**
 * @param keyText the `database.crypto.encryption_key` setting
 * @param context what the value is (e.g. `certificates.private_key`); the same must be given to `unseal`
 * @example const sealed = await seal(pem, config['database.crypto.encryption_key'], 'certificates.private_key');
 */
export async function seal(plaintext: string, keyText: string, context = ''): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ciphertext = await crypto.subtle.encrypt(params(iv, context), await aesKey(keyText), encoder.encode(plaintext));
  return `${VERSION}.${toBase64(iv)}.${toBase64(new Uint8Array(ciphertext))}`;
}

/** The plaintext of a sealed value; throws SealError when it cannot be opened. */
export async function unseal(sealed: string, keyText: string, context = ''): Promise<string> {
  const m = SEALED.exec(sealed);
  if (!m) throw new SealError('not a sealed value (expected v1.<iv>.<ciphertext>)');
  let plaintext: ArrayBuffer;
  try {
    plaintext = await crypto.subtle.decrypt(params(fromBase64(m[1]!), context), await aesKey(keyText), fromBase64(m[2]!));
  } catch (e) {
    if (e instanceof SealError) throw e;
    throw new SealError('sealed value cannot be opened: another key or context, or altered');
  }
  return decoder.decode(plaintext);
}

/** Whether text has the sealed format (says nothing of whether it opens). */
export const isSealed = (text: string) => SEALED.test(text);
