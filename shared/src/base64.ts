// Base64 (RFC 4648) for code that runs in the Worker as well as on Node: no
// Buffer, only `btoa`/`atob` (or the engine's own `Uint8Array` methods where
// it has them, which are faster on large attachments).

type NativeBase64 = {
  toBase64?: (this: Uint8Array) => string;
};
const NativeUint8Array = Uint8Array as unknown as { fromBase64?: (text: string) => Uint8Array<ArrayBuffer> };

/**
 * Standard base64 of `bytes`, padded.
 * @example toBase64(new TextEncoder().encode('hi')) // 'aGk='
 */
export function toBase64(bytes: Uint8Array): string {
  const native = (bytes as Uint8Array & NativeBase64).toBase64;
  if (typeof native === 'function') return native.call(bytes);
  let binary = '';
  // In pieces: fromCharCode(...) of a whole attachment would overflow the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Unpadded base64url (RFC 4648 section 5): tokens and secrets.
 * @example base64url(new Uint8Array([251, 255])) // '-_8'
 */
export function base64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The bytes of standard base64, read the forgiving way (WHATWG `atob`: ASCII
 * whitespace anywhere, padding optional); throws when it is not base64.
 * @example fromBase64('aGk') // Uint8Array [104, 105]
 */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  if (typeof NativeUint8Array.fromBase64 === 'function') return NativeUint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const BASE64 = /^[A-Za-z0-9+/\t\n\f\r ]*={0,2}[\t\n\f\r ]*$/;

/** Characters of base64 that carry bits: not whitespace, not padding. */
function base64DataChars(content: string): number {
  let chars = 0;
  for (let i = 0; i < content.length; i++) {
    const code = content.charCodeAt(i);
    if (code !== 0x3d && code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d && code !== 0x0c) chars++;
  }
  return chars;
}

/** Forgiving base64 (WHATWG): the standard alphabet, optional padding, ASCII whitespace anywhere. */
export const isBase64 = (content: string) => BASE64.test(content) && base64DataChars(content) % 4 !== 1;

/**
 * The decoded size of (forgiving) base64, without decoding it.
 * @example base64DecodedSize('aGk=') // 2
 */
export const base64DecodedSize = (content: string) => Math.floor((base64DataChars(content) * 6) / 8);
