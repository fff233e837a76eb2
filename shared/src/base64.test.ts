// Base64 without Buffer (shared/ runs in the Worker too, which has none),
// checked against RFC 4648 written out the slow way: six bits a character.
import { describe, expect, test } from 'vitest';
import { base64DecodedSize, base64url, fromBase64, isBase64, toBase64 } from './base64.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** RFC 4648 section 4, bit by bit. */
function reference(bytes: Uint8Array): string {
  const bits = Array.from(bytes, (b) => b.toString(2).padStart(8, '0')).join('');
  let out = '';
  for (let i = 0; i < bits.length; i += 6) out += ALPHABET[parseInt(bits.slice(i, i + 6).padEnd(6, '0'), 2)];
  return out.padEnd(Math.ceil(out.length / 4) * 4, '=');
}

const random = (n: number) => {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) bytes.set(crypto.getRandomValues(new Uint8Array(Math.min(65536, n - i))), i);
  return bytes;
};
const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

describe('toBase64 and fromBase64', () => {
  test.each([0, 1, 2, 3, 4, 5, 0x8000 - 1, 0x8000, 0x8000 + 1, 200_000])('%i bytes go there and back as RFC 4648 writes them', (n) => {
    const bytes = random(n);
    const text = toBase64(bytes);
    expect(text).toBe(reference(bytes));
    expect(same(fromBase64(text), bytes)).toBe(true);
  });

  test('every byte value', () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(toBase64(bytes)).toBe(reference(bytes));
    expect(same(fromBase64(toBase64(bytes)), bytes)).toBe(true);
  });

  test('reads the forgiving way: whitespace anywhere, padding optional', () => {
    expect(new TextDecoder().decode(fromBase64('aGVs\r\nbG8g d29y\tbGQ='))).toBe('hello world');
    expect(new TextDecoder().decode(fromBase64('aGk'))).toBe('hi');
  });

  test.each(['a', 'aGk*', 'aG=k', 'ab='])('refuses %j', (text) => expect(() => fromBase64(text)).toThrow());
});

test('base64url is unpadded and URL-safe', () => {
  for (const n of [0, 1, 2, 3, 31, 32, 33]) {
    const bytes = random(n);
    expect(base64url(bytes)).toBe(reference(bytes).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
  }
  expect(base64url(new Uint8Array([251, 255]))).toBe('-_8');
});

describe('isBase64 and base64DecodedSize', () => {
  test.each([
    ['', 0],
    ['aGk=', 2],
    ['aGk', 2],
    ['ab=', 1],
    ['aGVsbG8=\r\n', 5],
    ['aG Vs\nbG8', 5],
  ])('%j is base64 of %i bytes', (text, size) => {
    expect(isBase64(text)).toBe(true);
    expect(base64DecodedSize(text)).toBe(size);
    // What the send route stores: every `=` and space dropped, then decoded.
    expect(fromBase64(text.replace(/[\t\n\f\r =]/g, '')).length).toBe(size);
  });

  test.each(['a', 'aGk*', 'aG=k', '-_8', 'aGk==='])('%j is not base64', (text) => expect(isBase64(text)).toBe(false));
});
