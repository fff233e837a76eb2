// The node's ACME account key: one per node, made on first use and kept in
// its state directory (0600, like node.json), so the CA sees one account per
// node across restarts instead of a new registration each time.
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writePrivateFile } from '../../state/write-private-file.js';

export const accountKeyFile = (stateDir: string) => join(stateDir, 'acme-account.key');

/** The PEM (PKCS#8, ECDSA P-256) account key, created and stored when there is none yet. */
export async function loadAccountKey(stateDir: string): Promise<string> {
  const file = accountKeyFile(stateDir);
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  await writePrivateFile(file, pem);
  return pem;
}
