import { expect, test } from 'vitest';
import { constantTimeEqual, generateToken, parseToken, sha256Hex } from './tokens.js';

test('project keys are myk_ + 8 characters + _ + a 32-byte secret', () => {
  const { token, keyPrefix } = generateToken('project');
  expect(token).toMatch(/^myk_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
  expect(token.startsWith(`${keyPrefix}_`)).toBe(true);
  expect(parseToken(token)).toEqual({ kind: 'project', keyPrefix });
});

test('platform credentials are mya_', () => {
  const { token } = generateToken('platform');
  expect(token).toMatch(/^mya_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
  expect(parseToken(token)?.kind).toBe('platform');
});

test('relay node credentials are myr_', () => {
  const { token, keyPrefix } = generateToken('relay');
  expect(token).toMatch(/^myr_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
  expect(keyPrefix).toBe(token.slice(0, 12));
  expect(parseToken(token)).toEqual({ kind: 'relay', keyPrefix });
});

test.each([['myk_', 'project'], ['mya_', 'platform'], ['myr_', 'relay']] as const)('%s parses as %s', (prefix, kind) => {
  expect(parseToken(`${prefix}abcdefgh_${'a'.repeat(43)}`)).toEqual({ kind, keyPrefix: `${prefix}abcdefgh` });
});

test('tokens never repeat', () => {
  const seen = new Set(Array.from({ length: 200 }, () => generateToken('project').token));
  expect(seen.size).toBe(200);
});

test.each(['', 'myk_', 'myr_', 'myx_abcdefgh_' + 'a'.repeat(43), 'myR_abcdefgh_' + 'a'.repeat(43), 'myr_abcdefgh_' + 'a'.repeat(44), 'myk_abcdefgh_' + 'a'.repeat(42), 'myk_ABCDEFGH_' + 'a'.repeat(43), 'Bearer myk_x'])(
  'malformed token %j is refused',
  (t) => expect(parseToken(t)).toBeNull(),
);

test('sha256Hex is the hex SHA-256', async () => {
  expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('constantTimeEqual', () => {
  expect(constantTimeEqual('abc', 'abc')).toBe(true);
  expect(constantTimeEqual('abc', 'abd')).toBe(false);
  expect(constantTimeEqual('abc', 'abcd')).toBe(false);
});
