import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { encryptionKeyBytes } from '@edgemail/shared';
import { encryptionKeyFile, localEncryptionKey } from './encryption-key.js';

let dir: string | undefined;
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

test('made on first start (0600, 32 random bytes as base64) and reused after', () => {
  dir = mkdtempSync(join(tmpdir(), 'edgemail-key-'));
  const file = encryptionKeyFile(join(dir, '.data'));
  const key = localEncryptionKey(file);
  expect(encryptionKeyBytes(key)).toHaveLength(32);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readFileSync(file, 'utf8').trim()).toBe(key);
  expect(localEncryptionKey(file)).toBe(key);
});

test('a damaged key file stops start-up instead of being replaced', () => {
  dir = mkdtempSync(join(tmpdir(), 'edgemail-key-'));
  const file = join(dir, 'encryption-key');
  writeFileSync(file, 'not a key\n');
  expect(() => localEncryptionKey(file)).toThrow(/does not hold base64 of 32 bytes/);
  expect(readFileSync(file, 'utf8')).toBe('not a key\n');
});
