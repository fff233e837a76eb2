// The local stack's `database.crypto.encryption_key`: made on first start into
// `<data dir>/encryption-key` (mode 0600, 32 random bytes as base64) and
// reused after, so values sealed by one run open in the next. A key given in
// SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY wins; production always gives one.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { encryptionKeyBytes, envName } from '@edgemail/shared';

export const ENCRYPTION_KEY_ENV = envName('database.crypto.encryption_key');

/** A fresh key in the setting's form. */
export const newEncryptionKey = () => randomBytes(32).toString('base64');

export function encryptionKeyFile(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}/encryption-key`;
}

/** The key kept in `file`, made (0600) if there is none yet. */
export function localEncryptionKey(file: string): string {
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (!encryptionKeyBytes(key)) throw new Error(`${file} does not hold base64 of 32 bytes; remove it to make a new key (values sealed under the old one will no longer open)`);
    chmodSync(file, 0o600);
    return key;
  }
  mkdirSync(dirname(file), { recursive: true });
  const key = newEncryptionKey();
  // `wx`: two first starts at once cannot both write; the loser reads the winner's.
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return localEncryptionKey(file);
    throw e;
  }
  return key;
}
