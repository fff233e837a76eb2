// `database.crypto.encryption_key`: 32 bytes, written as base64 (standard or
// URL-safe alphabet, padding optional). Read the same way by the settings
// schema, which refuses anything else, and by the edge's sealing.
import { fromBase64 } from '../base64.js';

const BASE64_32_BYTES = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * The key's 32 bytes, or null when `text` is not base64 of exactly 32 bytes.
 * @example encryptionKeyBytes(toBase64(crypto.getRandomValues(new Uint8Array(32))))
 */
export function encryptionKeyBytes(text: string): Uint8Array<ArrayBuffer> | null {
  const t = text.trim();
  if (!BASE64_32_BYTES.test(t)) return null;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = fromBase64(t.replace(/-/g, '+').replace(/_/g, '/').replace(/=?$/, '='));
  } catch {
    return null;
  }
  return bytes.length === 32 ? bytes : null;
}

/** What the settings schema says of a malformed key (never the value itself). */
export const ENCRYPTION_KEY_PROBLEM = 'expected base64 of 32 random bytes (e.g. `openssl rand -base64 32`)';
